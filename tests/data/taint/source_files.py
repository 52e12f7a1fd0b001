# Engine probe: outside data written into a file whose name ends in ".py" is code (it runs when
# the module is imported); written elsewhere, or read, it is not. The name's constant end
# survives os.path.join, "+", "%" and f-strings.
import os

from flask import Flask, request

app = Flask(__name__)
HERE = os.path.dirname(__file__)


@app.route("/plugin", methods=["POST"])
def plugin():
    body = request.form["body"]
    target = os.path.join(HERE, "plugins", "hook.py")
    handle = open(target, "w")
    handle.write(body)  # $ code
    handle.close()
    with open(HERE + "/gen_" + request.args["n"] + ".py", "a") as out:  # $ path
        out.writelines([body])  # $ code
    with open("site/%s.pyw" % "boot", mode="x") as boot:
        boot.write(body)  # $ code
    with open(f"{HERE}/notes.txt", "w") as notes:
        notes.write(body)  # ok code (a text file)
    with open(target) as source:
        text = source.read()  # ok code (read, not written)
    where = target if body else f"{HERE}/cache.json"
    with open(where, "w") as either:
        either.write(body)  # ok code (".py" or ".json": not every value names Python source)
    return text
