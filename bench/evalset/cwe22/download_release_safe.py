import tarfile

import requests


def install_release(url: str, target: str) -> None:
    response = requests.get(url, stream=True, timeout=60)
    with tarfile.open(fileobj=response.raw, mode="r|gz") as tar:
        tar.extractall(target, filter="data")
