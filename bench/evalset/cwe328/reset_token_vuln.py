import hashlib
import time


def make_reset_token(user) -> str:
    token = hashlib.sha1(f"{user.id}{time.time()}".encode()).hexdigest()
    user.reset_token = token
    return token
