# Engine probe: obj.name where obj's class neither defines nor stores name but defines a
# __getattr__ returning a function it defines is what __getattr__(obj, "name") returns (a
# command runner turning every unknown name into a call); a name the class stores on its
# instance is found first. A closure that a
# method returns and a caller calls later holds that method's parameters, not the caller's:
# the analysis neither fails on them nor reports them as the caller's.
import subprocess

from flask import Flask, request

app = Flask(__name__)


class Runner:
    def __init__(self, program):
        self.program = program
        self.verbose = False

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args: self._call(name, *args)

    def _call(self, verb, *args):
        command = [self.program, verb, *args]
        return subprocess.check_output(" ".join(command), shell=True)  # $ command (runner.clone(url))


class Settings:
    def __init__(self):
        self.home = "/srv"

    def __getattr__(self, name):
        def read():
            return request.args[name]
        return read


@app.route("/dispatched")
def dispatched():
    runner = Runner("tool")
    runner.clone(request.args["url"])
    return "done"


@app.route("/settings")
def settings():
    subprocess.call("ls " + Settings().home, shell=True)  # ok command (stored by __init__: found first)
    subprocess.call("ls " + Settings().other(), shell=True)  # $ command
    return "done"


class Maker:
    def make(self, prefix):
        return lambda *args: self.run(prefix, *args)

    def run(self, verb, *args):
        subprocess.call(verb + " ".join(args), shell=True)  # $ command (Maker.run's own parameters)


def fetch(url):
    return Maker().make("clone")(url)
