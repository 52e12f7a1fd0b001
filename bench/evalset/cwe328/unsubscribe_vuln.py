import hashlib


def unsubscribe_link(user) -> str:
    unsubscribe_token = hashlib.md5(user.email.encode()).hexdigest()
    return f"https://example.com/unsubscribe?u={user.id}&t={unsubscribe_token}"
