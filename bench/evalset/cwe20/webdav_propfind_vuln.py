import xml.etree.ElementTree as ET

from flask import Flask, Response, request

from .dav import render_multistatus

app = Flask(__name__)
DAV = "{DAV:}"


@app.route("/dav/<path:name>", methods=["PROPFIND"])
def propfind(name):
    body = request.get_data()
    wanted = ["displayname", "getcontentlength"]
    if body:
        prop = ET.fromstring(body).find(f"{DAV}prop")
        if prop is not None:
            wanted = [child.tag.removeprefix(DAV) for child in prop]
    return Response(render_multistatus(name, wanted), status=207, content_type="application/xml")
