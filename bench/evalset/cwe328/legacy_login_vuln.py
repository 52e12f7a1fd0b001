import hashlib


def check_login(user, pw: str) -> bool:
    return hashlib.md5(pw.encode()).hexdigest() == user.password_hash
