import random
import time


def retry(call, attempts=5):
    """Retries a flaky call with exponential backoff and jitter."""
    for attempt in range(attempts):
        try:
            return call()
        except ConnectionError:
            delay = random.uniform(0, 2 ** attempt)
            time.sleep(delay)
    return call()
