from flask import Flask, request

from .storage import store

app = Flask(__name__)
MAX_UPLOAD = 10 * 1024 * 1024


class _Buffer:
    def __init__(self) -> None:
        self._chunks = []

    def add(self, chunk: bytes) -> None:
        self._chunks.append(chunk)

    def value(self) -> bytes:
        data = b"".join(self._chunks)
        assert isinstance(data, bytes)
        return data
