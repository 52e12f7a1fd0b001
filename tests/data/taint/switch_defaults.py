# Engine probe: a public function's switch (a parameter defaulting to True or False) is its
# callers' choice. What its parameters reach with the switches as they are is what it does to its
# callers' data by itself; a caller that turns one on is flagged at its own call.
import os
import pickle

from lxml import etree


def parse_document(path, resolve_entities=False):
    parser = etree.XMLParser(resolve_entities=resolve_entities)
    return etree.parse(path, parser=parser)  # ok xxe (entities resolved only where a caller asks); $ ssrf (the caller names the file or URL)


def parse_resolving(path, resolve_entities=True):
    parser = etree.XMLParser(resolve_entities=resolve_entities)  # $ xxe (resolving by default)
    return etree.parse(path, parser=parser)  # $ xxe; $ ssrf (the caller names the file or URL)


def load(data, allow_pickle=False):
    if not allow_pickle:
        raise ValueError("pickled data refused")
    return pickle.loads(data)  # ok deserialization (refused unless a caller allows it)


def load_trusting(data, allow_pickle=True):
    if not allow_pickle:
        raise ValueError("pickled data refused")
    return pickle.loads(data)  # $ deserialization


def run(command, quiet=False):
    if quiet:
        command += " > /dev/null"
    os.system(command)  # $ command (a flag that changes nothing the sink needs)


def run_keyword(command, *, dry_run=True):
    if not dry_run:
        os.system(command)  # ok command (runs only where a caller asks)


# A helper's switch is read at each call: a call that leaves it as it is or turns it off makes no
# resolving parser (svglib 0.9.4, the fix of CVE-2020-10799); one that turns it on does.
def read_tree(path, resolve_entities=False):
    parser = etree.XMLParser(resolve_entities=resolve_entities)
    return etree.parse(path, parser=parser)  # ok xxe (no caller turns it on); $ ssrf (the caller names the file or URL)


class Drawing:
    def __init__(self, path):
        self.tree = read_tree(path)


def read_plain(path):
    return read_tree(path, resolve_entities=False)


def read_entities(path, resolve_entities=False):
    parser = etree.XMLParser(resolve_entities=resolve_entities)  # $ xxe (a caller below turns it on)
    return etree.parse(path, parser=parser)  # $ xxe; $ ssrf (the caller names the file or URL)


def read_with_entities(path):
    return read_entities(path, resolve_entities=True)
