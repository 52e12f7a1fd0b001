import requests


def status(host: str) -> bool:
    session = requests.Session()
    return session.get(f"https://{host}/status", verify=False, timeout=3).ok
