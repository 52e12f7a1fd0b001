import requests


def deliver(webhook_url: str, payload: dict) -> int:
    return requests.post(webhook_url, json=payload, timeout=5).status_code
