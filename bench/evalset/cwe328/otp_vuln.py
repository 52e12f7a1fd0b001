import hashlib
import time


def one_time_code(secret: str) -> str:
    otp = int(hashlib.md5(f"{secret}{int(time.time()) // 30}".encode()).hexdigest(), 16) % 1000000
    return f"{otp:06d}"
