# Engine probe: lxml parsers: the default one, and one made without resolve_entities=False,
# resolve entities (external ones before lxml 5); one made with resolve_entities=False does not.
# lxml.objectify parses the same way.
from flask import Flask, request
from lxml import etree, objectify

app = Flask(__name__)


@app.route("/xml", methods=["POST"])
def xml():
    etree.fromstring(request.data)  # $ xxe
    lenient = etree.XMLParser(remove_comments=True, recover=True)
    etree.fromstring(request.data, parser=lenient)  # $ xxe
    etree.parse(request.files["doc"], etree.XMLParser(huge_tree=True))  # $ xxe
    strict = etree.XMLParser(resolve_entities=False, no_network=True)
    etree.fromstring(request.data, parser=strict)  # ok xxe
    return "ok"


# A module-level parser set up by a method the models do not describe keeps its type (python-docx
# 0.8.6's fix of CVE-2016-5851: its element class lookup is stored in it).
configured = etree.XMLParser(remove_blank_text=True, resolve_entities=False)
configured.set_element_class_lookup(etree.ElementNamespaceClassLookup())
resolving = etree.XMLParser(remove_blank_text=True)
resolving.set_element_class_lookup(etree.ElementNamespaceClassLookup())


@app.route("/configured", methods=["POST"])
def with_configured():
    etree.fromstring(request.data, configured)  # ok xxe
    return etree.fromstring(request.data, resolving)  # $ xxe


@app.route("/objects", methods=["POST"])
def objects():
    objectify.fromstring(request.data)  # $ xxe
    objectify.parse(request.files["doc"], objectify.makeparser(remove_blank_text=True))  # $ xxe
    return objectify.XML(request.data, objectify.makeparser(resolve_entities=False))  # ok xxe


# A parser's copy() is configured as the parser is (lxml's _BaseParser.copy), also when the parser
# is a global made on first use.
_shared = None


def _copied():
    global _shared
    if _shared is None:
        _shared = etree.XMLParser(resolve_entities=False)
    return _shared.copy()


@app.route("/copied", methods=["POST"])
def copied():
    etree.fromstring(request.data, _copied())  # ok xxe
    return etree.fromstring(request.data, etree.XMLParser().copy())  # $ xxe


# parse() reads a file name or a URL given as a string (libxml2 fetches http:// and ftp:// URLs);
# a buffer of the data, an opened file or an upload is read as a document.
@app.route("/named", methods=["POST"])
def named():
    import io

    etree.parse(request.form["where"], _copied())  # $ ssrf
    etree.parse(io.BytesIO(request.data), _copied())  # ok ssrf
    etree.parse(io.StringIO(request.form["text"]), _copied())  # ok ssrf
    etree.parse(request.files["doc"], _copied())  # ok ssrf
    return "ok"
