import subprocess


class CheckoutJob:
    def __init__(self, branch: str) -> None:
        self.branch = branch

    def run(self) -> int:
        return subprocess.call("git checkout " + self.branch, shell=True)
