import hashlib


def dedup_key(image_bytes: bytes) -> str:
    return hashlib.sha1(image_bytes).hexdigest()
