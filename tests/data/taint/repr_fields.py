# Engine probe: a value written as its repr holds no line break (log and header injection), but
# is still its data for every other kind.
import logging

from flask import Flask, make_response, request

app = Flask(__name__)
log = logging.getLogger(__name__)


class Upload:
    def __init__(self, filename):
        self.filename = filename

    def __repr__(self):
        return f"Upload({self.filename})"


@app.route("/visit")
def visit():
    where = request.args["next"]
    log.info("visit to %s", where)  # $ log
    log.info("visit to %r", where)  # ok log
    log.info("visit to %r from %s", where, request.remote_addr)  # ok log
    log.info("visit from %r to %s", request.remote_addr, where)  # $ log
    log.warning("visit to " + repr(where))  # ok log
    log.warning(f"visit to {where!r}")  # ok log
    log.warning(f"visit to {where}")  # $ log
    log.warning("visit to %r" % where)  # ok log
    log.warning("visit to %r (%s)" % (where, where))  # $ log
    log.warning("visit to %r (%a)" % (where, where))  # ok log
    log.warning("visit to %(to)r" % {"to": where})  # $ log
    log.error("visit to " + ascii(where))  # ok log
    upload = Upload(where)
    log.warning("bad upload: %r", upload)  # $ log (its own __repr__ writes the name as it is)
    log.warning(f"bad upload: {upload!r}")  # $ log
    response = make_response("moved")
    response.headers["X-Next"] = repr(where)  # ok header
    response.headers["X-Then"] = where  # $ header
    return "<p>" + repr(where) + "</p>"  # $ xss
