import requests

PLUGIN_URL = "https://plugins.example.com/latest.py"


def install_latest() -> None:
    source = requests.get(PLUGIN_URL, timeout=10).text
    exec(source)
