import base64
import secrets
import time

from tornado.web import RequestHandler


class PageHandler(RequestHandler):
    def prepare(self):
        rng = secrets.SystemRandom()
        self.csp_nonce = base64.b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode()
        self.set_header("Content-Security-Policy", f"script-src 'nonce-{self.csp_nonce}'")

    def get(self):
        self.render("page.html", nonce=self.csp_nonce, now=time.time())
