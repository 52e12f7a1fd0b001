import requests

REGISTRY = "https://127.0.0.1:5000"


def catalog():
    return requests.request("GET", REGISTRY + "/v2/_catalog", verify=False, timeout=10).json()
