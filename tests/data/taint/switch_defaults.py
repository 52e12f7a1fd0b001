# Engine probe: a public function's switch (a parameter defaulting to True or False) is its
# callers' choice. What its parameters reach with the switches as they are is what it does to its
# callers' data by itself; a caller that turns one on is flagged at its own call.
import os
import pickle

from lxml import etree


def parse_document(path, resolve_entities=False):
    parser = etree.XMLParser(resolve_entities=resolve_entities)
    return etree.parse(path, parser=parser)  # ok xxe (entities resolved only where a caller asks)


def parse_resolving(path, resolve_entities=True):
    parser = etree.XMLParser(resolve_entities=resolve_entities)  # $ xxe (resolving by default)
    return etree.parse(path, parser=parser)  # $ xxe


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
