import base64

import dill


def run_task(payload: str):
    task = dill.loads(base64.b64decode(payload))
    return task()
