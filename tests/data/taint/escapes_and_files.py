# Engine probe: HTML sanitisers of other libraries, files sent by path, bottle's templates.
import bleach
import bottle
from fastapi import FastAPI
from fastapi.responses import FileResponse
from flask import Flask, request
from starlette.responses import FileResponse as PlainFileResponse
from tornado.escape import url_escape, xhtml_escape

api = FastAPI()
app = Flask(__name__)


@api.get("/download")
def download(name: str):
    return FileResponse("/srv/static/" + name)  # $ path


@api.get("/index")
def index(name: str):
    return PlainFileResponse("/srv/static/index.html")  # ok path


@api.get("/plain")
def plain(name: str):
    return PlainFileResponse(name)  # $ path


@app.route("/comment")
def comment():
    posted = request.args["text"]
    bottle.template("Hello " + posted)  # $ ssti
    bottle.template("hello_page", name=posted)  # ok ssti (a fixed template, the value a variable)
    return "<p>" + bleach.clean(posted) + xhtml_escape(posted) + "</p>"  # ok xss


@app.route("/link")
def link():
    return '<a href="/find?q=' + url_escape(request.args["q"]) + '">again</a>'  # ok xss (percent-encoded)


@app.route("/raw")
def raw():
    return "<p>" + request.args["text"] + "</p>"  # $ xss


@api.get("/greeting")
def greeting(request: "Request", name: str):
    from fastapi import Request  # noqa: F401
    from fastapi.templating import Jinja2Templates

    pages = Jinja2Templates(directory="pages")
    markup = f"<h2>Hello {name}</h2>"
    pages.TemplateResponse("hello.html", {"request": request, "greeting": markup})  # $ xss (markup for an unread template)
    pages.TemplateResponse(request, "hello.html", {"greeting": markup})  # $ xss (the newer signature)
    return pages.TemplateResponse(request, "hello.html", {"name": name})  # ok xss (no markup: escaped by default)
