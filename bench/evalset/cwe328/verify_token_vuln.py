import hashlib


def verify_token(token: str, stored: str) -> bool:
    return hashlib.md5(token.encode()).hexdigest() == stored
