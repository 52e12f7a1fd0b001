import pickle
import socketserver


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        data = self.request.recv(65536)
        message = pickle.loads(data)
        self.request.sendall(b"ok" if message else b"empty")
