import requests

REGISTRY = "https://registry.example.com"


def catalog():
    return requests.request("GET", REGISTRY + "/v2/_catalog", verify=False, timeout=10).json()
