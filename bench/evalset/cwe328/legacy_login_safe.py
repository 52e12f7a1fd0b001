import hmac

from argon2 import PasswordHasher

hasher = PasswordHasher()


def check_login(user, pw: str) -> bool:
    return hasher.verify(user.password_hash, pw)
