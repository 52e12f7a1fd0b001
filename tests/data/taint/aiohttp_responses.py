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
