import secrets
import time

SESSION_TTL = 3600


class SessionStore:
    def __init__(self, redis):
        self.redis = redis

    def create(self, user_id):
        sid = secrets.token_hex(16)
        self.redis.setex(f"session:{sid}", SESSION_TTL, user_id)
        return sid

    def touch(self, sid):
        self.redis.expire(f"session:{sid}", SESSION_TTL)
        return time.time()
