# Engine probe: a value that is one of a few constants (chosen by a condition, or a variable
# found in a constant list): the program an argument vector starts, the pattern a regular
# expression is; a check that narrows to constants makes the value safe.
import re
import subprocess

WORDS = re.compile(r"<.*?>|((?:\w[-\w]*|&.*?;)+)", re.S)
CHARS = re.compile(r"<.*?>|(.)", re.S)
PLAIN = re.compile(r"[a-z]+")
DIGITS = re.compile(r"[0-9]+")


def kind_of(url):
    scheme, _, rest = url.partition("+")
    if scheme in ("git", "hg"):
        return scheme, rest
    return "git", url


def checkout(url, revision):
    program, location = kind_of(url)
    subprocess.run([program, "clone", "--", location])
    subprocess.run([program, "checkout", revision])  # $ argument
    subprocess.run([program, "checkout", "--", revision])  # ok argument
    subprocess.run(program + " status", shell=True)  # ok command (git or hg)


def first_word(text, words):
    pattern = WORDS if words else CHARS
    return pattern.search(text)  # $ slow-regex


def first_token(text, digits):
    pattern = DIGITS if digits else PLAIN
    return pattern.search(text)  # ok slow-regex
