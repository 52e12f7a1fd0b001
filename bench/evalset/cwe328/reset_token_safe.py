import secrets


def make_reset_token(user) -> str:
    token = secrets.token_urlsafe(32)
    user.reset_token = token
    return token
