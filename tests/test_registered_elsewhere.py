"""A handler one module registers and another defines (``analysis.registered_elsewhere``): the
registering module's analysis makes the framework's call, and what the function does with the
framework's data is reported in the defining file and at the registration."""

from __future__ import annotations

from fleetledger.analysis import engine, parser

RUNNER = '''import yaml


def main(args):
    with open(args.config) as handle:
        return yaml.unsafe_load(handle)


def unused(args):
    with open(args.config) as handle:
        return yaml.unsafe_load(handle)
'''

COMMANDS = '''class Command(object):
    @staticmethod
    def main(args):
        raise NotImplementedError


class Run(Command):
    @staticmethod
    def main(args):
        from .runner import main
        main(args)
'''

CLI = '''import argparse

from . import commands, runner


def parser_for(kind):
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    if kind == "direct":
        parser.set_defaults(handler=runner.main)
    else:
        parser.set_defaults(handler=commands.Run.main)
    return parser


def main():
    args = parser_for("direct").parse_args()
    args.handler(args)
'''

NOT_ARGPARSE = '''from . import runner


class Registry:
    def set_defaults(self, **kwargs):
        self.kwargs = kwargs


def main(registry):
    registry.set_defaults(handler=runner.unused)
    registry.handler(None)
'''

VIEWS = '''import subprocess


def ping(host):
    return subprocess.check_output("ping -c 1 " + host, shell=True)
'''

APP = '''from flask import Flask

from . import views

app = Flask(__name__)
app.add_url_rule("/ping/<host>", view_func=views.ping)
'''


def _analyse(modules: dict[str, str], path: str) -> engine.FileAnalysis:
    def load(other: str):  # type: ignore[no-untyped-def]
        return (other, parser.parse_module(modules[other]).module) if other in modules else None

    return engine.analyse(path, parser.parse_module(modules[path]).module, paths=list(modules), loader=load)


def _flows(analysis: engine.FileAnalysis) -> set[tuple[str, str, int, str]]:
    return {(flow.kind, flow.site.path, flow.site.line, flow.label.channel) for flow in analysis.flows}


PACKAGE = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER, "pkg/commands.py": COMMANDS, "pkg/cli.py": CLI,
           "pkg/registry.py": NOT_ARGPARSE, "pkg/views.py": VIEWS, "pkg/app.py": APP}


def test_an_argparse_handler_of_another_module_gets_the_command_line() -> None:
    found = _flows(_analyse(PACKAGE, "pkg/cli.py"))
    assert ("deserialization", "pkg/runner.py", 6, "cli") in found  # runner.main, registered directly
    assert ("path", "pkg/runner.py", 5, "cli") in found
    assert not {f for f in found if f[1] == "pkg/runner.py" and f[2] in (10, 11)}, "runner.unused is not registered here"


def test_a_function_is_not_a_handler_of_a_call_on_an_object_of_another_type() -> None:
    """``set_defaults`` of the code's own class registers nothing for argparse."""
    found = _flows(_analyse(PACKAGE, "pkg/registry.py"))
    assert not {f for f in found if f[3] == "cli"}


def test_a_flask_view_registered_by_another_module_gets_its_route_arguments() -> None:
    found = _flows(_analyse(PACKAGE, "pkg/app.py"))
    assert ("command", "pkg/views.py", 5, "http") in found


def test_the_defining_module_alone_reports_no_outside_data() -> None:
    """Analysed by itself, the module defining the handlers sees only its public functions'
    callers (what the registration makes outside data is the registering module's to report)."""
    found = _flows(_analyse(PACKAGE, "pkg/runner.py"))
    assert not {f for f in found if f[3] in ("cli", "http")}
