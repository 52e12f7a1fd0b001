import hashlib
import random


def new_session_id() -> str:
    session_id = hashlib.md5(str(random.random()).encode()).hexdigest()
    return session_id
