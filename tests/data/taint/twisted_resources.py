# Engine probe: Twisted Web resources: render methods get the request and return the page;
# getChild gets a path segment; the request's writes, redirects, headers and cookies; a
# protocol's data callbacks get what the peer sent.
import os

import treq
from twisted.protocols.basic import LineReceiver
from twisted.web.client import Agent, RedirectAgent
from twisted.web import resource
from twisted.web.util import redirectTo


class Greeting(resource.Resource):
    isLeaf = True

    def render_GET(self, request):
        name = request.args[b"name"][0]
        request.setHeader(b"x-name", name)  # $ header
        request.addCookie(b"seen", b"1")  # $ cookie-secure, $ cookie-httponly
        request.addCookie(b"seen", b"1", secure=True, httpOnly=True)  # ok cookie-secure, ok cookie-httponly
        return b"<h1>Hello " + name + b"</h1>"  # $ xss

    def render_POST(self, request):
        request.write(request.content.read())  # $ xss
        request.redirect(request.getHeader(b"referer"))  # $ redirect, $ header
        return b"<p>ok</p>"  # ok xss


class Folder(resource.Resource):
    def getChild(self, path, request):
        request.write(b"<b>%s</b>" % path)  # $ xss
        return resource.NoResource()


class Back(resource.Resource):
    def render_GET(self, request):
        redirectTo(request.args[b"next"][0], request)  # $ redirect
        return b""


class Listing(resource.Resource):
    # The request a render method passes to a helper stays Twisted's, whatever the helper
    # calls it: its members are the Twisted request's, not any framework's.
    def render_GET(self, request):
        return self.moved(request)  # $ xss

    def moved(self, request):
        return redirectTo(request.uri + b"/", request)  # $ redirect


class Shell(LineReceiver):
    # A protocol's line callback gets the peer's line.
    def lineReceived(self, line):
        os.system(b"run " + line)  # $ command

    def connectionMade(self):
        os.system(b"greet")  # ok command


class Fetch(resource.Resource):
    # Twisted's HTTP clients fetch the URL they are given.
    def __init__(self, reactor):
        super().__init__()
        self.agent = RedirectAgent(Agent(reactor))

    def render_GET(self, request):
        target = request.args[b"url"][0]
        self.agent.request(b"GET", target)  # $ ssrf
        self.agent.request(b"GET", b"https://status.example.com/" + target)  # $ ssrf (partial: the host is fixed)
        treq.get(target.decode())  # $ ssrf
        return b"<p>fetching</p>"
