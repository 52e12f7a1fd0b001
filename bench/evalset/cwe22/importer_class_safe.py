import os
import tarfile

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures.tar.gz")


class Importer:
    def __init__(self) -> None:
        self.archive_path = FIXTURES

    def run(self, dest: str) -> None:
        with tarfile.open(self.archive_path) as tar:
            tar.extractall(dest)
