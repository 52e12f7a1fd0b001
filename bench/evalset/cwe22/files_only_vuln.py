import tarfile


def files_only(archive):
    return [m for m in archive.getmembers() if m.isfile()]


def unpack(path: str, dest: str) -> None:
    with tarfile.open(path) as archive:
        archive.extractall(dest, members=files_only(archive))
