"""A handler one module registers and another defines (``analysis.registered_elsewhere``): the
registering module's analysis makes the framework's call, and what the function does with the
framework's data is reported in the defining file and at the registration. Also the pieces a
registration in a loop needs: ``C.__subclasses__()`` (``iterators._subclasses``), a loop over
another module's list (``Program.module_container``) and a loop variable followed from the
registering function (``receivers``)."""

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


# A command-line tool whose commands are the subclasses of a base class, each registered in a
# loop (nameko's shape, every name changed): ``Deploy.main`` reads the file ``--settings`` names.
VERBS = '''class Verb:
    @staticmethod
    def attach(parser):
        raise NotImplementedError

    @staticmethod
    def main(args):
        raise NotImplementedError


class Deploy(Verb):
    @staticmethod
    def attach(parser):
        parser.add_argument("--settings")

    @staticmethod
    def main(args):
        from .loader import load
        return load(args.settings)


class _Quiet(Verb):
    @staticmethod
    def main(args):
        import os
        os.system(args.line)


class Unrelated:
    @staticmethod
    def main(args):
        import pickle
        return pickle.loads(args.blob)


ALL = Verb.__subclasses__()
'''

LOADER = '''import yaml


def load(path):
    with open(path) as handle:
        return yaml.unsafe_load(handle)
'''

TOOL = '''import argparse

from . import verbs


def build():
    top = argparse.ArgumentParser()
    sub = top.add_subparsers()
    for verb in verbs.ALL:
        one = sub.add_parser("x")
        verb.attach(one)
        one.set_defaults(run=verb.main)
    return top


def run():
    args = build().parse_args()
    args.run(args)
'''

# A loop over another module's list of the code's checks calls each of them with its data.
CHECKS = '''import subprocess


def lint(text):
    subprocess.run("lint " + text, shell=True)


ALL = [lint]
'''

RUNS_CHECKS = '''from flask import Flask, request

from . import checks

app = Flask(__name__)


@app.route("/check")
def check():
    for one in checks.ALL:
        one(request.args["text"])
    return "ok"
'''


def _analyse(modules: dict[str, str], path: str) -> engine.FileAnalysis:
    def load(other: str):  # type: ignore[no-untyped-def]
        return (other, parser.parse_module(modules[other]).module) if other in modules else None

    return engine.analyse(path, parser.parse_module(modules[path]).module, paths=list(modules), loader=load)


def _flows(analysis: engine.FileAnalysis) -> set[tuple[str, str, int, str]]:
    return {(flow.kind, flow.site.path, flow.site.line, flow.label.channel) for flow in analysis.flows}


PACKAGE = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER, "pkg/commands.py": COMMANDS, "pkg/cli.py": CLI,
           "pkg/registry.py": NOT_ARGPARSE, "pkg/views.py": VIEWS, "pkg/app.py": APP, "pkg/verbs.py": VERBS,
           "pkg/loader.py": LOADER, "pkg/tool.py": TOOL, "pkg/checks.py": CHECKS, "pkg/runs_checks.py": RUNS_CHECKS}


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


def test_handlers_registered_in_a_loop_over_a_base_classs_subclasses() -> None:
    """``for verb in verbs.ALL: set_defaults(run=verb.main)`` with ``ALL = Verb.__subclasses__()``:
    each direct subclass's ``main`` (a private one too: Python lists it) is a handler; a class
    that does not derive from ``Verb`` is not."""
    found = _flows(_analyse(PACKAGE, "pkg/tool.py"))
    assert ("deserialization", "pkg/loader.py", 6, "cli") in found  # Deploy.main -> load
    assert ("command", "pkg/verbs.py", 26, "cli") in found  # _Quiet.main
    assert not {f for f in found if f[1] == "pkg/verbs.py" and f[2] == 33}, "Unrelated is no subclass of Verb"


def test_subclasses_lists_only_the_classes_deriving_from_the_class() -> None:
    """A class none of whose module's classes derives from it lists none."""
    modules = dict(PACKAGE, **{"pkg/verbs.py": VERBS.replace("ALL = Verb.__subclasses__()", "ALL = Deploy.__subclasses__()")})
    found = _flows(_analyse(modules, "pkg/tool.py"))
    assert not {f for f in found if f[3] == "cli"}, "Deploy has no subclass: nothing is registered"


def test_a_loop_over_another_modules_list_calls_each_function_in_it() -> None:
    found = _flows(_analyse(PACKAGE, "pkg/runs_checks.py"))
    assert ("command", "pkg/checks.py", 5, "http") in found
