import hashlib


def cache_key(url: str) -> str:
    key = hashlib.sha1(url.encode()).hexdigest()
    return f"page:{key}"
