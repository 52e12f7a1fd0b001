# Engine probe: XPath, LDAP, XXE, SSTI, log and header injection, regex, weak hash, code injection.
import hashlib
import logging
import re
import xml.dom.minidom
import xml.etree.ElementTree
import xml.sax

import ldap
from flask import Flask, make_response, render_template_string, request
from lxml import etree

app = Flask(__name__)
log = logging.getLogger(__name__)


@app.route("/xpath")
def find_user():
    name = request.args["name"]
    root = etree.parse("users.xml").getroot()
    root.xpath("//user[@name='" + name + "']")  # $ xpath
    root.xpath("//user[@name=$name]", name=name)  # ok xpath
    found = root.xpath("//user[@name='" + name + "']")  # $ xpath
    return "<p>%s</p>" % found  # ok xss


@app.route("/ldap")
def directory():
    uid = request.args["uid"]
    conn = ldap.initialize("ldap://localhost")
    conn.search_s("dc=example,dc=com", ldap.SCOPE_SUBTREE, "(uid=" + uid + ")")  # $ ldap
    return "ok"


@app.route("/xml", methods=["POST"])
def parse_xml():
    etree.fromstring(request.data)  # $ xxe
    parser = etree.XMLParser(resolve_entities=False)
    etree.fromstring(request.data, parser=parser)  # ok xxe
    plain = xml.sax.make_parser()
    xml.dom.minidom.parseString(request.data, plain)  # $ xml-bomb (ok xxe: external entities are off)
    sax = xml.sax.make_parser()
    sax.setFeature(xml.sax.handler.feature_external_ges, True)
    xml.dom.minidom.parseString("<fixed/>", sax)  # ok xxe (a constant document)
    xml.dom.minidom.parseString(request.data, sax)  # $ xxe $ xml-bomb
    sax.parse(request.files["doc"])  # $ xxe
    xml.etree.ElementTree.fromstring(request.data)  # $ xml-bomb
    return "ok"


@app.route("/hello")
def hello():
    name = request.args["name"]
    log.info("hello %s", name)  # $ log
    log.info("hello %s", name.replace("\n", "").replace("\r", ""))  # ok log
    render_template_string("Hello " + name)  # $ ssti
    resp = make_response("ok")
    resp.headers["X-Name"] = name  # $ header
    re.search(name, "text")  # $ regex
    re.search(re.escape(name), "text")  # ok regex
    hashlib.md5(name.encode()).hexdigest()  # $ weak-hash
    hashlib.md5(name.encode(), usedforsecurity=False).hexdigest()  # ok weak-hash
    eval(name)  # $ code
    return resp

