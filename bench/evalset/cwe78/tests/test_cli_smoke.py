import subprocess


def run_cli(arguments):
    return subprocess.run(f"python -m myapp {arguments}", shell=True, capture_output=True)


def test_help():
    assert run_cli("--help").returncode == 0
