import json
import socketserver


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        data = self.request.recv(65536)
        message = json.loads(data)
        self.request.sendall(b"ok" if message else b"empty")
