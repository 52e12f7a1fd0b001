import os
import pickle
import zlib


class FileBasedCache:
    def __init__(self, directory):
        self._dir = directory

    def _key_to_file(self, key):
        return os.path.join(self._dir, "%s.djcache" % abs(hash(key)))

    def set(self, key, value):
        with open(self._key_to_file(key), "wb") as f:
            f.write(zlib.compress(pickle.dumps(value, pickle.HIGHEST_PROTOCOL)))

    def get(self, key, default=None):
        try:
            with open(self._key_to_file(key), "rb") as f:
                return pickle.loads(zlib.decompress(f.read()))
        except FileNotFoundError:
            return default
