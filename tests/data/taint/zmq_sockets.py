# Engine probe: what a ZeroMQ socket receives is network data; recv_pyobj() unpickles it.
import json
import pickle

import zmq
import zmq.asyncio


class Pipe:
    def __init__(self, address):
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.PULL)
        self.socket.bind(address)

    def receive(self):
        data = self.socket.recv()
        return pickle.loads(data)  # $ deserialization

    def receive_object(self):
        return self.socket.recv_pyobj()  # $ unpickle-peer

    def receive_message(self):
        return json.loads(self.socket.recv())  # ok deserialization (JSON builds only data)


async def serve(address):
    context = zmq.asyncio.Context()
    socket = context.socket(zmq.ROUTER)
    socket.bind(address)
    frames = await socket.recv_multipart()
    return pickle.loads(frames[1])  # $ deserialization
