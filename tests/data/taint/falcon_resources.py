# Engine probe: a Falcon resource is a plain class whose responders the framework calls with
# the request, the response and the fields of the route's URI template; the request holds the
# client's data, the response does not.
import subprocess

import falcon
import requests


class Ledger:
    def on_get(self, req, resp, entry):
        rows = subprocess.run("grep " + entry + " ledger.txt", shell=True, capture_output=True)  # $ command
        resp.text = rows.stdout.decode()

    def on_post(self, req, resp):
        hook = req.get_param("callback")
        requests.post(hook, json=req.media)  # $ ssrf
        raise falcon.HTTPSeeOther(req.params["next"])  # $ redirect

    def on_get_summary(self, req, resp, number: int):
        subprocess.run("seq %d" % number, shell=True)  # ok command (the template field is an int)
        subprocess.run(["echo", str(resp)], check=False)

    def describe(self, text):
        return subprocess.run("echo " + text, shell=True)  # $ command (a public method: its caller's data)


app = falcon.App()
app.add_route("/ledger/{entry}", Ledger())
app.add_route("/ledger/{number:int}/summary", Ledger(), suffix="summary")
