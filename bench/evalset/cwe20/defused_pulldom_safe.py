from xml.dom import pulldom
from xml.sax import expatreader


class DefusedExpatParser(expatreader.ExpatParser):
    def start_doctype_decl(self, name, sysid, pubid, has_internal_subset):
        raise ValueError("DTDs are forbidden")


class Deserializer:
    def __init__(self, stream):
        self.stream = stream
        self.event_stream = pulldom.parse(self.stream, self._make_parser())

    def _make_parser(self):
        return DefusedExpatParser()
