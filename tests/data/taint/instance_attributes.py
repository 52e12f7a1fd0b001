# Engine probe: a library object that __init__ stores on self is of its type in the class's
# other methods (a client keeping a requests.Session, a wrapper keeping a tar archive).
import subprocess
import tarfile

import requests


class Client:
    def __init__(self, base):
        self.session = requests.Session()
        self.base = base
        self.runner = subprocess.run

    def deliver(self, target):
        return self.session.post(target)  # $ ssrf

    def ping(self):
        return self.session.get(self.base + "/ping")  # $ ssrf (Client(base): the constructor's parameter is the host)

    def status(self):
        return self.session.get("https://status.example.org/")  # ok ssrf

    def execute(self, line):
        return self.runner(line, shell=True)  # $ command


class Archive:
    def __init__(self, path):
        self.archive = tarfile.open(path)  # $ path (a parameter names the archive opened, as for open())

    def unpack(self, folder):
        self.archive.extractall(folder)  # $ tar-extraction


class Derived(Client):
    def forward(self, other):
        return self.session.put(other)  # $ ssrf


class Reader:
    def __init__(self):
        self.loaded = self.prepare()  # reads self while __init__ is summarised

    def prepare(self):
        return self.loaded



# A base class's method reads the client its subclasses' constructors make (the one it runs
# on is one of theirs).
class _Client:
    def _fetch(self, url):
        return self.session.get(url)  # $ ssrf


class _PlainClient(_Client):
    def __init__(self):
        self.session = requests.Session()


def proxy(url):
    return _PlainClient()._fetch(url).text
