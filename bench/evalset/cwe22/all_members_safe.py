import os
import tarfile


def within(base: str, name: str) -> bool:
    target = os.path.realpath(os.path.join(base, name))
    return os.path.commonpath([os.path.realpath(base), target]) == os.path.realpath(base)


def restore(backup_file: str, dest: str) -> None:
    with tarfile.open(backup_file) as tar:
        tar.extractall(dest, members=[m for m in tar.getmembers() if within(dest, m.name)])
