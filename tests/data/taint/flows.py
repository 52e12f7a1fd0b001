# Engine probe: flow through containers, attributes, helpers, string building, constant folding.
import os
import sys


def first_word(text):
    return text.split(" ")[0]


class Holder:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


def main():
    arg = sys.argv[1]
    values = ["safe", arg, "also safe"]
    os.system(values[0])  # ok command
    os.system(values[1])  # $ command
    table = {"a": arg, "b": "constant"}
    os.system(table["b"])  # ok command
    os.system(table["a"])  # $ command
    os.system(first_word(arg))  # $ command
    holder = Holder(arg)
    os.system(holder.get())  # $ command
    other = Holder("fixed")
    os.system(other.get())  # ok command
    picked = arg if 7 * 18 > 200 else "fixed"
    os.system(picked)  # ok command
    joined = " ".join(["ls", arg])
    os.system(joined)  # $ command
    formatted = "ls {}".format(arg)
    os.system(formatted)  # $ command
    fstring = f"ls {arg}"
    os.system(fstring)  # $ command
    number = int(arg)
    os.system(f"ls {number}")  # ok command
    if arg.isdigit():
        os.system("kill " + arg)  # ok command
    arg = "reset"
    os.system(arg)  # ok command


main()


import dataclasses


@dataclasses.dataclass
class Job:
    name: str
    cmd: str

    def run(self):
        os.system(self.cmd)  # ok command (only where a caller passes data in)


def start(argv):
    job = Job("x", argv[1])
    os.system(job.cmd)  # $ command
    os.system(job.name)  # ok command


start(sys.argv)
