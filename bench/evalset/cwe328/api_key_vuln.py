import hashlib
import os


def new_api_key() -> str:
    api_key = hashlib.sha1(os.urandom(16)).hexdigest()
    return api_key
