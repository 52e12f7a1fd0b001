import os
import tarfile


def safe_members(archive):
    for member in archive.getmembers():
        if os.path.isabs(member.name) or ".." in member.name.split("/"):
            continue
        if member.issym() or member.islnk():
            continue
        yield member


def unpack(archive_path: str, dest: str) -> None:
    with tarfile.open(archive_path) as archive:
        archive.extractall(dest, members=safe_members(archive))
