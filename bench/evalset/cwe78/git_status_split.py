import shlex
import subprocess


def status() -> None:
    subprocess.run(shlex.split("git status --short"), check=True)
