# Engine probe: Sanic passes the request first, whatever its name, then the route's
# parameters; Quart is Flask's API for asyncio, its request data awaited.
import os

from quart import Quart, redirect, render_template_string, request
from sanic import Sanic
from sanic.response import file, html

service = Sanic("probe")
site = Quart(__name__)


@service.route("/files/<name>")
async def download(incoming, name):
    return await file(os.path.join("/srv/files", name))  # $ path


@service.get("/hello")
async def hello(req):
    who = req.args.get("who", "")
    return html("<p>Hello " + who + "</p>")  # $ xss


@service.get("/count/<n:int>")
async def count(req, n: int):
    return html("<p>%d</p>" % n)  # ok xss


@site.route("/greet", methods=["POST"])
async def greet():
    form = await request.form
    return await render_template_string("Hello " + form["name"])  # $ ssti $ xss (the page it renders)


@site.route("/go")
async def go():
    return redirect(request.args["to"])  # $ redirect
