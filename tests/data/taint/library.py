# Engine probe: a library's public functions are its entry points (channel "api"); private
# helpers are flagged only when a caller passes outside data; summaries carry flows across calls.
import logging
import os
import pickle
import shlex
import socket
import subprocess
import tarfile

import yaml
from jinja2 import Environment
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment


def run_tool(args):
    return subprocess.check_output("tool " + args, shell=True)  # $ command


def run_quoted(args):
    return subprocess.check_output("tool " + shlex.quote(args), shell=True)  # ok command


def _internal(cmd):
    subprocess.call(cmd, shell=True)  # ok command


def safe_wrapper():
    _internal("ls -l")


def load_cache(path):
    with open(path, "rb") as handle:  # $ path
        return pickle.load(handle)  # $ deserialization


def load_config(text):
    return yaml.load(text, Loader=yaml.SafeLoader)  # ok deserialization


def load_config_unsafe(text):
    return yaml.load(text, Loader=yaml.Loader)  # $ deserialization


def unpack(archive_path, target):
    with tarfile.open(archive_path) as archive:  # $ path (a parameter names the archive opened, as for open())
        archive.extractall(target)  # $ tar-extraction
        archive.extractall(target, filter="data")  # ok tar-extraction


class Runner:
    def __init__(self, command):
        self.command = command

    def start(self):
        return subprocess.Popen(self.command, shell=True)  # $ command (Runner(command).start(): the constructor's parameter)


def exists_in(folder, name):
    return os.path.exists(os.path.join(folder, name))  # ok path (an existence check is a remote client's probe, not a caller's)


def render_report(source, values):
    plain = Environment().from_string(source)  # $ ssti $ autoescape-off
    boxed = SandboxedEnvironment().from_string(source)  # ok ssti (a sandboxed environment)
    frozen = ImmutableSandboxedEnvironment(autoescape=True).from_string(source)  # ok ssti
    return plain.render(values) + boxed.render(values) + frozen.render(values)


def record(event):
    logging.getLogger(__name__).warning("event %s", event)  # ok log (the caller chose what its library logs)


def _noted(event):
    logging.getLogger(__name__).warning("event %s", event)  # $ log (the network data its caller passes)


def relay():
    connection = socket.create_connection(("example.org", 7000))
    _noted(connection.recv(1024))


def profile(pid: int, seconds: "float", label: str | None = None):
    import subprocess
    subprocess.run(f"py-spy record --pid {pid} --duration {seconds}", shell=True)  # ok command (numbers)
    subprocess.run(f"py-spy record --pid {pid} --title {label}", shell=True)  # $ command
