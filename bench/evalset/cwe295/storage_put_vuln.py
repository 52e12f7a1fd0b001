import requests


def upload(blob: bytes) -> None:
    requests.put("https://storage.internal.example.com/bucket/latest", data=blob, verify=False, timeout=30)
