import requests


def status(port: int) -> bool:
    session = requests.Session()
    return session.get(f"https://localhost:{port}/status", verify=False, timeout=3).ok
