# Engine probe: argparse's sub-command dispatch. A function that set_defaults stores in the
# parsed namespace is called with it (args.handler(args)), so its parameters hold the command
# line; the parsers are built inside a function, as command-line programs build them. A function
# stored by another object's set_defaults is not such a handler.
import argparse
import subprocess

import yaml


def deploy(options):
    with open(options.settings) as handle:  # $ path
        settings = yaml.unsafe_load(handle.read())  # $ deserialization
    subprocess.call(options.hook, shell=True)  # $ command
    return settings


def describe(options):
    subprocess.call("echo " + options.name, shell=True)  # $ command


def _replay(entry):
    subprocess.call("replay " + entry, shell=True)  # ok command (stored by another object's set_defaults)


class Registry:
    def set_defaults(self, **handlers):
        self.handlers = handlers


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    deploying = commands.add_parser("deploy")
    deploying.add_argument("--settings")
    deploying.add_argument("--hook")
    deploying.set_defaults(run=deploy)
    describing = commands.add_parser("describe")
    describing.set_defaults(run=describe)
    Registry().set_defaults(replay=_replay)
    parsed = parser.parse_args()
    parsed.run(parsed)


if __name__ == "__main__":
    main()


def _render(result):
    subprocess.call("render " + result, shell=True)  # ok command (stored, never called as the namespace's method)


def tabulate():
    parser = argparse.ArgumentParser()
    parser.set_defaults(output=_render)
    return parser.parse_args()


def _fetch(address, keep=False):
    subprocess.call("curl -O " + address, shell=True)  # $ command (Python Fire passes the command line)


def legacy():
    import optparse

    import docopt
    options, rest = optparse.OptionParser().parse_args()
    subprocess.call("tar xf " + options.archive, shell=True)  # $ command
    subprocess.call("ls " + rest[0], shell=True)  # $ command
    arguments = docopt.docopt("Usage: tool <name>")
    subprocess.call("touch " + arguments["<name>"], shell=True)  # $ command


if __name__ == "__main__":
    import fire
    fire.Fire(_fetch)
