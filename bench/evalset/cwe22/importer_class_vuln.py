import tarfile


class Importer:
    def __init__(self, archive_path: str) -> None:
        self.archive_path = archive_path

    def run(self, dest: str) -> None:
        with tarfile.open(self.archive_path) as tar:
            tar.extractall(dest)
