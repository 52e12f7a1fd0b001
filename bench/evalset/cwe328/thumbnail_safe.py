import hashlib


def thumbnail_name(url: str) -> str:
    return hashlib.md5(url.encode()).hexdigest() + ".jpg"
