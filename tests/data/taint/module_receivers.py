# Engine probe: a module is not a container. A parameter passed to a module's function the
# models do not describe (shlex.split) once stayed on the module's name, reached another
# function's sink as that parameter, and crashed the file's analysis (IndexError).
import os
import shlex
import sys


def run(shell_command):
    args = shlex.split(shell_command)
    os.system(args[0])  # $ command (a public function's parameter)


def run():  # noqa: F811 - redefined, as the corpus sample that found this does
    shell_command = sys.argv[2]
    args = shlex.split(shell_command)
    os.system(args)  # $ command


def fixed():
    os.system(shlex.split("ls -l")[0])  # ok command
