import hashlib


def asset_version(content: bytes) -> str:
    return hashlib.sha1(content).hexdigest()[:10]
