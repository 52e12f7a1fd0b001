# Engine probe: JavaScript run from Python (Js2Py's pyimport and Node.js reach the system), and
# Tornado's HTTP clients fetching a URL the request chose.
import execjs
import js2py
from tornado import httpclient, web


class Calculator(web.RequestHandler):
    def get(self):
        script = self.get_argument("js")
        js2py.eval_js(script)  # $ code
        execjs.eval(script)  # $ code
        (js2py.eval_js6 if len(script) > 9 else js2py.eval_js)(script)  # $ code
        js2py.eval_js("1 + 1")  # ok code
        execjs.get().compile(script)  # $ code
        self.write("done")


class Proxy(web.RequestHandler):
    async def get(self):
        target = self.get_argument("url")
        client = httpclient.AsyncHTTPClient()
        await client.fetch(target)  # $ ssrf
        httpclient.HTTPRequest(target, method="GET")  # $ ssrf
        await client.fetch("https://api.example.com/items/" + self.get_argument("id"))  # $ ssrf (partial: the host is fixed)
        self.write("done")


class Stored(web.RequestHandler):
    # What the handler stores on itself is not in the members Tornado sets (self.request).
    def post(self):
        self.note = self.get_argument("note")
        js2py.eval_js("log('" + self.request.method + "')")  # ok code
        js2py.eval_js("log('" + self.note + "')")  # $ code
