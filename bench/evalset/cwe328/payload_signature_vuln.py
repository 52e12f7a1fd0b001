import hashlib

SECRET = b"from-settings"


def signature(payload: bytes) -> str:
    return hashlib.md5(SECRET + payload).hexdigest()
