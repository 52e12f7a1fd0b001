import pickle
import zlib

import requests


class HttpCache:
    def __init__(self, base_url):
        self.base_url = base_url

    def set(self, key, value):
        requests.put(f"{self.base_url}/{key}", data=zlib.compress(pickle.dumps(value)), timeout=5)

    def get(self, key, default=None):
        response = requests.get(f"{self.base_url}/{key}", timeout=5)
        if response.status_code != 200:
            return default
        return pickle.loads(zlib.decompress(response.content))
