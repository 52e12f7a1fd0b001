# Engine probe: a request handler of the standard library's http.server (no framework).
import html
import os
import shlex
import sqlite3
import subprocess
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse


class Notes(BaseHTTPRequestHandler):
    def do_GET(self):
        fields = parse_qs(urlparse(self.path).query)
        title = fields.get("t", [""])[0]
        subprocess.check_output("grep " + title + " notes.txt", shell=True)  # $ command
        subprocess.check_output("grep " + shlex.quote(title) + " notes.txt", shell=True)  # ok command
        self.send_response(302)
        self.send_header("Location", title)  # $ redirect $ header
        self.send_header("Content-Type", "text/html")  # ok header
        self.end_headers()
        self.wfile.write(("<h1>%s</h1>" % title).encode())  # $ xss
        self.wfile.write(("<h1>%s</h1>" % html.escape(title)).encode())  # ok xss
        self.wfile.write(b"<p>static</p>")  # ok xss

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        posted = self.rfile.read(length).decode()
        db = sqlite3.connect("notes.db")
        db.execute("INSERT INTO notes VALUES ('%s')" % posted)  # $ sql
        db.execute("INSERT INTO notes VALUES (?)", (posted,))  # ok sql
        os.system("logger " + self.headers["User-Agent"])  # $ command


class Helper:
    path = "/srv/static"

    def do_GET(self):
        os.system("ls " + self.path)  # ok command (not a request handler: its path is its own constant)


HTTPServer(("127.0.0.1", 8000), Notes).serve_forever()
