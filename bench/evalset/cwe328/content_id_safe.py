import hashlib


def content_id(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()
