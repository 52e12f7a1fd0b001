# Engine probe: a library's public entry points also include its public classes: what the
# constructor stores from its parameters on self is its caller's data in every other method
# (Loader(url).load() is an entry point as load(url) would be). What a caller passes as a file
# object is its data too when read (stream.read()); any other attribute of a passed object is
# that object's state.
import pickle
import subprocess

import requests


class Loader:
    def __init__(self, url, expression, name="x"):
        self.url = url
        self.expression = expression
        self.fixed = "https://example.org/"
        self.name = name.strip()

    def load(self):
        return requests.get(self.url)  # $ ssrf

    def calculate(self):
        return eval(self.expression)  # $ code

    def ping(self):
        return requests.get(self.fixed)  # ok ssrf

    def run(self):
        return subprocess.run("ls " + self.name, shell=True)  # $ command


class _Internal:
    def __init__(self, url):
        self.url = url

    def load(self):
        return requests.get(self.url)  # ok ssrf (a private class: not an entry point)


def deserialize(stream):
    return pickle.loads(stream.read())  # $ deserialization


def launch(job):
    return subprocess.run(job.command, shell=True)  # ok command (the state of an object the caller passed)
