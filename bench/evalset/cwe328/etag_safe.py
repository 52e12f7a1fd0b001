import hashlib


def etag(body: bytes) -> str:
    return hashlib.new("md5", body).hexdigest()
