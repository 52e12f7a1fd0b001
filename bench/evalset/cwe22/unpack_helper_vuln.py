import tarfile


def unpack(archive_path: str, dest: str) -> None:
    with tarfile.open(archive_path) as archive:
        archive.extractall(dest)
