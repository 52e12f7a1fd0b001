import subprocess


def compress(path: str, dest: str = "/var/backups/site.tgz") -> int:
    """Archives one directory of the site."""
    return subprocess.call("tar czf " + dest + " " + path, shell=True)
