import requests
import yaml


def fetch_manifest(url: str):
    response = requests.get(url, timeout=5)
    return yaml.load(response.text, Loader=yaml.Loader)
