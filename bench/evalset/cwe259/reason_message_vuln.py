REASON_NO_CSRF_COOKIE = "CSRF cookie not set."
CSRF_TOKEN_SECRET = "k9-Xf2!pQ7w*Lm4z"


class RejectRequest(Exception):
    def __init__(self, reason):
        self.reason = reason
