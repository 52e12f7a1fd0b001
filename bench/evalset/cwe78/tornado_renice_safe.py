import os

from tornado.web import RequestHandler


class ReniceHandler(RequestHandler):
    def post(self):
        level = int(self.get_argument("level"))
        os.system(f"renice {level} -p {os.getpid()}")
        self.write("ok")
