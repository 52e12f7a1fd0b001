# Engine probe: servers without a web framework. An asyncio protocol's callbacks, a socketserver
# request handler's connection and an h11 connection's events hold what the peer sent.
import asyncio
import logging
import os
import socketserver
import sqlite3
import subprocess

import h11

log = logging.getLogger(__name__)


class Commands(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        line = data.decode().strip()
        subprocess.run("lookup " + line, shell=True)  # $ command
        subprocess.run(["lookup", line])  # ok command
        self.transport.write(b"ok")


class Lookups(asyncio.DatagramProtocol):
    def datagram_received(self, data, addr):
        name = data.decode()
        sqlite3.connect("hosts.db").execute("SELECT ip FROM hosts WHERE name = '%s'" % name)  # $ sql
        sqlite3.connect("hosts.db").execute("SELECT ip FROM hosts WHERE name = ?", (name,))  # ok sql


class Files(socketserver.StreamRequestHandler):
    def handle(self):
        wanted = self.rfile.readline().strip().decode()
        with open(os.path.join("/srv/files", wanted)) as opened:  # $ path
            self.wfile.write(opened.read().encode())


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        payload = self.request.recv(1024)
        os.system(b"echo " + payload)  # $ command


class Server(asyncio.Protocol):
    def __init__(self):
        self.conn = h11.Connection(h11.SERVER)

    def data_received(self, data):
        self.conn.receive_data(data)
        self.events()

    def events(self):
        event = self.conn.next_event()
        if isinstance(event, h11.Request):
            log.info("request for %s", event.target)  # $ log


class Quiet(asyncio.Protocol):
    def connection_made(self, transport):
        transport.write(b"hello")

    def eof_received(self):
        subprocess.run("cleanup", shell=True)  # ok command (no peer data)
