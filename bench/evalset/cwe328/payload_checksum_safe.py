import hashlib


def checksum(payload: bytes) -> str:
    return hashlib.md5(payload).hexdigest()
