import tarfile


def restore(backup_file: str, dest: str) -> None:
    with tarfile.open(backup_file) as tar:
        tar.extractall(dest, members=tar.getmembers())
