# Engine probe: a module's namespace read by a name from outside is getattr by another name, a
# member of what such a name chose among a module's members is chosen too.
import importlib
import json

import plugins
from flask import Flask, request

app = Flask(__name__)
HANDLERS = {"one": plugins.one, "two": plugins.two}


@app.route("/run")
def run():
    name = request.args["name"]
    vars(plugins)[name]()  # $ reflection
    vars(plugins).get(name)()  # $ reflection
    plugins.__dict__[name]()  # $ reflection
    vars(plugins)["one"]()  # ok reflection (a constant name)
    HANDLERS[name]()  # ok reflection (the author's table of functions)
    return "done"


@app.route("/load", methods=["POST"])
def load():
    config = json.loads(request.data)
    # Imported, not called: no sink (Django's admindocs imports the view a URL names once it has
    # checked that it is a registered view, a check the engine cannot read through its method).
    importlib.import_module(config["module"])  # ok reflection
    cls = getattr(plugins, config["class"])
    cls.from_config(config["config"])  # $ reflection
    return "loaded"


def plugin(name, module_name):
    importlib.import_module(module_name)  # ok reflection
    return vars(plugins)[name]()  # ok reflection (its caller chooses among the module's functions)
