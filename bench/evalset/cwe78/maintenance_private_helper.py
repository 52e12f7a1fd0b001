import subprocess


def _run(command):
    subprocess.run(command, shell=True, check=True)


def rotate_logs():
    _run("logrotate /etc/logrotate.d/app")


def vacuum():
    _run("psql -c 'VACUUM ANALYZE'")
