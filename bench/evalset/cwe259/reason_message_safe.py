REASON_NO_CSRF_COOKIE = "CSRF cookie not set."
REASON_CSRF_TOKEN_MISSING = "CSRF token missing."


class RejectRequest(Exception):
    def __init__(self, reason):
        self.reason = reason
