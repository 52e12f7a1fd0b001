# Engine probe: Flask error handlers send what they return as the page.
from flask import Blueprint, Flask, request
from markupsafe import escape

app = Flask(__name__)
pages = Blueprint("pages", __name__)


@app.errorhandler(404)
def missing(error):
    return "<h1>No page at %s</h1>" % request.path, 404  # $ xss


@pages.app_errorhandler(500)
def broken(error):
    return "<h1>Failed: %s</h1>" % escape(request.path), 500  # ok xss


@app.errorhandler(403)
def forbidden(error):
    return "<h1>Forbidden: %s</h1>" % error, 403  # ok xss (the exception Flask passes, not outside data)
