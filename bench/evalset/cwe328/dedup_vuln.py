import hashlib


def remember_login(store, username: str, password: str) -> None:
    store[username] = hashlib.sha1(password.encode()).hexdigest()
