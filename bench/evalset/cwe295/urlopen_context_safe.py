import ssl
import urllib.request


def download(url: str) -> bytes:
    with urllib.request.urlopen(url, context=ssl.create_default_context()) as response:
        return response.read()
