# Engine probe: regular expressions whose matching can take polynomial time, matched against
# outside data (ReDoS), and ones that cannot or are not.
import re
import urllib.request

import regex

from flask import Flask, request

app = Flask(__name__)
TRAILING = re.compile(r"\s+$")
SEPARATOR = re.compile(r"\s*,\s*")
FIELDS = re.compile(r"^(\w+)\s*=\s*(.*)$")
PLAIN = re.compile(r"^[a-z0-9_]+$")
SPACED = re.compile(r"""
    ^ (\w+)     # a name
    \ * = \ * (\d+) $
""", re.VERBOSE)
TAG = re.compile(r"<([^>]*\srel\s*=\s*['\"]?([^'\">]+)[^>]*)>", re.I)


@app.route("/a")
def view():
    text = request.args.get("q", "")
    TRAILING.sub("", text)  # $ slow-regex
    SEPARATOR.split(text)  # $ slow-regex (split tries every start: each in a run of spaces backtracks over the rest)
    FIELDS.match(text)  # $ slow-regex (\s* and .* share spaces, and the end anchor can fail)
    PLAIN.match(text)  # ok slow-regex
    SPACED.match(text)  # ok slow-regex (read with its flags: the spaces are not the pattern's)
    re.search(r"\d+$", text)  # $ slow-regex (each start in a run of digits backtracks over the rest)
    re.match(r"\d+$", text)  # ok slow-regex (match starts at the text's start only)
    re.sub(r"^\s+|\s+$", "", text)  # $ slow-regex
    re.findall(r"\w+", text)  # ok slow-regex (nothing after the run can fail)
    re.fullmatch(r"\w+\s*\w+", text)  # $ slow-regex
    re.search(r"^(\w+)++\s*x", text)  # ok slow-regex (a possessive repetition never backtracks)
    re.match(r"\s*(.*?)\s*$", "constant text")  # ok slow-regex (not outside data)
    return "done"


@app.route("/b")
def bounded():
    text = request.args.get("q", "")
    if len(text) > 200:
        return "too long"
    TRAILING.search(text)  # ok slow-regex (its length is bounded)
    return "done"


@app.route("/c")
def bounded_inside():
    text = request.args.get("q", "")
    if 200 >= len(text):
        TRAILING.search(text)  # ok slow-regex (its length is bounded)
    TRAILING.search(text)  # $ slow-regex (not on this path)
    return "done"


def _links(page):
    return [m.group(1) for m in TAG.finditer(page)]  # $ slow-regex (the network data fetch() passes)


def fetch():
    page = urllib.request.urlopen("https://example.org/index.html").read().decode()
    return _links(page)


class Listing:
    line = re.compile(r"^ *(\d+) +(.+?) +(\w+)$")

    def parse(self, text):
        return self.line.match(text)  # $ slow-regex (the compiled pattern of the class, on its caller's text)


@app.route("/d")
def counted():
    parts = request.args.getlist("p")
    if len(parts) > 100:
        return "too many"
    for part in parts:
        TRAILING.search(part)  # $ slow-regex (the check counted the items, not their characters)
    text = request.args.get("q", "")
    if len(text) > 10_000_000:
        return "too long"
    TRAILING.search(text)  # $ slow-regex (ten million characters are still too many)
    if len(text) <= 100:
        TRAILING.search(text * 1000)  # $ slow-regex (a text built from the short one)
    return "done"


@app.route("/e")
def other_module():
    text = request.args.get("q", "")
    regex.search(r"\s+$", text)  # $ slow-regex (the regex module backtracks too)
    regex.compile(r"<[^>]*>").sub("", text)  # $ slow-regex
    re.findall(r"\b\w+\b", text)  # ok slow-regex (a word's run starts once, and \b holds where it stops)
    return "done"


@app.route("/f")
def sliced():
    text = request.args.get("q", "")
    TRAILING.search(text[:200])  # ok slow-regex (at most 200 characters)
    TRAILING.search(text[:20_000_000])  # $ slow-regex
    return "done"


_match_rgb = re.compile(r"rgb\(\s*(\d+\.?\d*)\s*,\s*(\d+\.?\d*)\s*\)$").match
_strip = TRAILING.sub
NESTED = re.compile("".join([r"^(\s*)", r"(\w+\s*)*", r"$"]))  # $ redos (the pattern "".join builds)
SIMPLE = re.compile("|".join(["a", "b"]))


@app.route("/bound")
def bound_methods():
    text = request.args.get("q", "")
    _match_rgb(text)  # $ slow-regex (PATTERN.match read, then called: the same method)
    _strip("", text)  # $ slow-regex
    SIMPLE.match(text)  # ok slow-regex
    list(map(SEPARATOR.split, request.args.getlist("q")))  # $ slow-regex (map calls the bound method)
