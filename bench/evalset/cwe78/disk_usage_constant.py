import subprocess


def disk_usage() -> str:
    return subprocess.check_output("df -h / | tail -1", shell=True, text=True)
