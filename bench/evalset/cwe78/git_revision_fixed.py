import subprocess


def revision() -> str:
    return subprocess.check_output(["/usr/bin/git", "rev-parse", "HEAD"]).decode().strip()
