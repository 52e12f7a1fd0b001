import requests


def scrape(target: str) -> str:
    return requests.get(target + "/metrics", verify=False, timeout=2).text
