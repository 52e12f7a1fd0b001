# Engine probe: aiohttp responses whose headers are set from the request.
from aiohttp import web

routes = web.RouteTableDef()


@routes.get("/trace")
async def trace(request):
    reply = web.Response(text="ok")
    reply.headers["X-Trace"] = request.query["t"]  # $ header
    reply.headers["Location"] = request.query["next"]  # $ header $ redirect
    reply.headers["X-Fixed"] = "1"  # ok header
    return reply


@routes.get("/more")
async def more(request):
    reply = web.Response(text="ok")
    reply.headers.add("X-Trace", request.query["t"])  # $ header
    reply.headers.add("Location", request.query["next"])  # $ header $ redirect
    reply.headers.setdefault("X-Mode", request.query["m"])  # $ header
    reply.headers.update({"X-Id": request.query["id"]})  # $ header
    reply.headers.extend([("X-Tag", request.query["tag"])])  # $ header
    reply.headers.add("X-Fixed", "1")  # ok header
    reply.headers.update({"X-Fixed": "1"})  # ok header
    return reply


@routes.get("/page")
async def page(request):
    # aiohttp.web re-exports its submodules' names: the same classes, imported from where they live.
    from aiohttp.web_exceptions import HTTPFound
    from aiohttp.web_response import Response

    name = request.match_info["name"]
    if name.startswith("go:"):
        raise HTTPFound(name[3:])  # $ redirect
    return Response(text=f"<h1>{name}</h1>", content_type="text/html")  # $ xss


def templates(app, loader, env_options):
    import aiohttp_jinja2
    from fastapi.templating import Jinja2Templates
    from starlette.templating import Jinja2Templates as StarletteTemplates

    aiohttp_jinja2.setup(app, loader=loader, autoescape=False)  # $ autoescape-off
    aiohttp_jinja2.setup(app, loader=loader)  # ok autoescape-off
    aiohttp_jinja2.setup(app, loader=loader, autoescape=True)  # ok autoescape-off
    Jinja2Templates(directory="templates", autoescape=False)  # $ autoescape-off
    StarletteTemplates(directory="templates", autoescape=False)  # $ autoescape-off
    StarletteTemplates(directory="templates", **env_options)  # ok autoescape-off


def sessions(app, pool, key, options):
    from aiohttp_session import SimpleCookieStorage, setup
    from aiohttp_session.cookie_storage import EncryptedCookieStorage
    from aiohttp_session.redis_storage import RedisStorage

    setup(app, RedisStorage(pool))  # $ cookie-secure
    setup(app, RedisStorage(pool, secure=True))  # ok cookie-secure
    setup(app, EncryptedCookieStorage(key, secure=True, httponly=False))  # $ cookie-httponly
    setup(app, EncryptedCookieStorage(key, secure=True))  # ok cookie-httponly
    setup(app, SimpleCookieStorage(**options))  # ok cookie-secure ok cookie-httponly
