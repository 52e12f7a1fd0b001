# Engine probe: a library's API through what its callers can reach. A value a call computed from
# a parameter (a parsed tree, a split URL) is the caller's data whatever is read from it; an
# attribute of an object the caller passed is that object's state. A private hook a public
# method of the base class calls on the instance (the template-method pattern) is the API too.
import ast
import copy
import os
import subprocess
from urllib.parse import urlparse
from xml.etree import ElementTree


def run_parsed(source):
    tree = ast.parse(source)
    exec(compile(tree.body, "<source>", "exec"))  # $ code


def ping_host(url):
    host = urlparse(url).hostname
    subprocess.run("ping -c 1 " + host, shell=True)  # $ command


def run_config(config):
    os.system(config.command)  # ok command (the state of an object the caller passed)


class Tool:
    def run(self, tool_input):
        return self._run(tool_input.strip())

    def _run(self, text):
        raise NotImplementedError

    def _describe(self, text):
        os.system("echo " + text)  # ok command (no public method calls it)


class ShellTool(Tool):
    def _run(self, text):
        return subprocess.check_output(text, shell=True)  # $ command

    def _describe(self, text):
        os.system("echo " + text)  # ok command (no public method calls it)


class _Hidden(Tool):
    def _run(self, text):
        return subprocess.check_output(text, shell=True)  # ok command (a private class)


class Registry:
    """What a call computed from the instance's state is still read as that state where the
    summary is applied (a copy keeps its type: ``find`` on it is ElementTree's)."""

    def __init__(self):
        self._template = ElementTree.fromstring("<message><payload/></message>")

    def _message(self):
        root = copy.deepcopy(self._template)
        payload = root.find("payload")
        return root, payload

    def register(self, address):
        (root, payload) = self._message()
        payload.find("./entry[@ip='%s']" % address)  # $ xpath
        return root
