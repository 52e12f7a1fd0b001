import hashlib


def email_verification_code(email: str) -> str:
    reset_code = hashlib.md5(email.encode()).hexdigest()[:8]
    return reset_code
