# Engine probe: JavaScript run from Python (Js2Py's pyimport and Node.js reach the system), and
# Tornado's HTTP clients fetching a URL the request chose.
import execjs
import js2py
from tornado import httpclient, web


class Calculator(web.RequestHandler):
    def get(self):
        script = self.get_argument("js")
        self.write(str(js2py.eval_js(script)))  # $ code
        self.write(str(execjs.eval(script)))  # $ code
        self.write(str((js2py.eval_js6 if len(script) > 9 else js2py.eval_js)(script)))  # $ code
        self.write(str(js2py.eval_js("1 + 1")))  # ok code


class Proxy(web.RequestHandler):
    async def get(self):
        target = self.get_argument("url")
        client = httpclient.AsyncHTTPClient()
        response = await client.fetch(target)  # $ ssrf
        request = httpclient.HTTPRequest(target, method="GET")  # $ ssrf
        fixed = await client.fetch("https://api.example.com/items/" + self.get_argument("id"))  # $ ssrf (partial: the host is fixed)
        self.set_header("Content-Type", "text/plain")
        self.finish(response.body + fixed.body + request.method.encode())
