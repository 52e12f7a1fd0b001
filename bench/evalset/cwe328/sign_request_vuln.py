import hashlib

SIGNING_KEY = b"from-settings"


def sign_request(body: bytes) -> str:
    return hashlib.sha1(SIGNING_KEY + body).hexdigest()
