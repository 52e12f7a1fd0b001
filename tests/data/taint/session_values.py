# Engine probe: what the client sent stays the client's in the session, however it was checked
# or converted (a trust boundary); only a value the program chose is safe there.
from flask import Flask, request, session

site = Flask(__name__)


@site.route("/pick", methods=["POST"])
def pick():
    size = request.form["size"]
    if size.isdigit():
        session["size"] = size  # $ trust-boundary (checked, still the client's)
    session["count"] = int(request.form["count"])  # $ trust-boundary (converted, still the client's)
    if request.form["theme"] in ("light", "dark"):
        session["theme"] = "dark" if request.form["theme"] == "dark" else "light"  # ok trust-boundary (chosen from constants)
    return "ok"
