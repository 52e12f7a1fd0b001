# Engine probe: what an attack on this round's engine found (each once wrong or a crash).
import configparser
import os
import xml.sax

import defusedxml.sax
from xml.sax.handler import feature_external_ges

from flask import Flask, request

app = Flask(__name__)


def keep(a, b):
    global KEPT
    KEPT = b  # a parameter's label once stayed on the global and crashed the file (IndexError)


def use(x):
    os.system(KEPT)  # ok command (nothing from outside was kept)


def configure(reader):
    reader.setFeature(feature_external_ges, True)  # $ xxe (a reader the engine does not follow)


@app.route("/loop")
def loop():
    given = request.args["v"]
    state = "a"
    while True:
        match state:
            case "a":
                state = "b"
            case "b":
                os.system(given)  # $ command (the second round)
                break
    rotated = ["safe", given]
    rotated.append(rotated.pop(0))
    os.system(rotated[0])  # $ command (the argument moved the list first)
    return "ok"


@app.route("/config")
def config():
    settings = configparser.ConfigParser()
    settings.set("s", "a", request.args["x"])
    settings.set("s", "b", "%(a)s")
    os.system(settings.get("s", "b"))  # $ command (interpolation reads a)
    return "ok"


@app.route("/sax")
def sax():
    doc = request.files["d"]
    reader = xml.sax.make_parser()
    reader.setFeature(feature_external_ges, request.args.get("ents") == "1")
    reader.parse(doc)  # $ xxe (the request may turn them on)
    quiet = xml.sax.make_parser()
    quiet.setFeature(feature_external_ges, True)
    quiet.setFeature(feature_external_ges, False)
    quiet.parse(doc)  # ok xxe (turned off again)
    defused = defusedxml.sax.make_parser()
    defused.setFeature(feature_external_ges, request.args.get("ents") == "1")
    defused.parse(doc)  # ok xxe (defusedxml's reader refuses external entities whatever its features)
    return "ok"


def doubling(seed):
    grown = [seed]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]
    grown = [grown, grown]  # 2^30 items as a tree: walking it as one never ends
    os.system(grown[0][1][0][0])  # $ command (a public function's parameter)



class _Quiet:
    def words(self):
        return ""


def _launder(text) -> _Quiet:
    return text


@app.route("/quiet")
def run_quietly():
    # A return annotation that lies does not turn the data into the claimed class's objects.
    os.system(_launder(request.args["c"]).words())  # $ command
