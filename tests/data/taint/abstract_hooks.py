# Engine probe: a base class's method that only declares a hook (abstract, or raising
# NotImplementedError) runs, on an instance, the override of its subclass.
import abc
import os
import subprocess
import tarfile
import tempfile


class Unpacker(abc.ABC):
    def __init__(self, filename):
        self.filename = filename

    @staticmethod
    @abc.abstractmethod
    def members(archive):
        """Return the members."""

    @staticmethod
    def member_name(member):
        raise NotImplementedError

    def run(self):
        dest = tempfile.mkdtemp()
        with tarfile.open(self.filename) as archive:  # $ path (a parameter names the archive opened, as for open())
            for item in self.members(archive):
                name = self.member_name(item)
                os.chmod(os.path.join(dest, name), 0o644)  # $ path
        return dest


class TarUnpacker(Unpacker):
    @staticmethod
    def members(archive):
        return archive.getmembers()

    @staticmethod
    def member_name(member):
        return member.name


class Runner:
    def command(self):
        raise NotImplementedError()

    def start(self):
        subprocess.call(self.command(), shell=True)  # $ command
        subprocess.call(self.fixed(), shell=True)  # ok command

    def fixed(self):
        return "ls"


class EnvRunner(Runner):
    def command(self):
        return os.environ["CMD"]

    def fixed(self):
        return os.environ["CMD"]  # (an override of a method with a body is not the base's own call)


class Extractor:
    def __init__(self, filename):
        self.filename = filename
        self.opener = None

    def extract_all(self):
        with self.opener(self.filename) as archive:  # $ path (a parameter names the archive opened, as for open())
            archive.extractall(tempfile.mkdtemp())  # $ tar-extraction


class TarExtractor(Extractor):
    def __init__(self, filename):
        super().__init__(filename)
        self.opener = tarfile.open
