import ssl
import urllib.request


def download(url: str) -> bytes:
    with urllib.request.urlopen(url, context=ssl._create_unverified_context()) as response:
        return response.read()
