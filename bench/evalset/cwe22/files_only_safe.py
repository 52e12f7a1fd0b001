import os
import tarfile


def files_only(archive):
    return [m for m in archive.getmembers() if m.isfile() and not os.path.isabs(m.name) and ".." not in m.name]


def unpack(path: str, dest: str) -> None:
    with tarfile.open(path) as archive:
        archive.extractall(dest, members=files_only(archive))
