import xml.sax

import defusedxml.sax
from flask import Blueprint, request

bp = Blueprint("tracks", __name__)


class TrackPointCounter(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.points = 0

    def startElement(self, name, attrs):
        if name == "trkpt":
            self.points += 1


@bp.route("/tracks/upload", methods=["POST"])
def upload_track():
    handler = TrackPointCounter()
    defusedxml.sax.parseString(request.files["gpx"].read(), handler)
    return {"points": handler.points}
