# Engine probe: Werkzeug's Request.application decorator makes a WSGI application of a function
# or method taking the request: that parameter (after self) holds the request.
import subprocess

from werkzeug.wrappers import Request, Response


@Request.application
def application(request):
    subprocess.run("grep " + request.args["q"] + " notes.txt", shell=True)  # $ command
    return Response("ok")


class Service:
    def __init__(self, root):
        self.root = root

    @Request.application
    def __call__(self, http_request):
        subprocess.run(["ls", self.root])  # ok command
        subprocess.run("cat " + http_request.get_data(as_text=True), shell=True)  # $ command
        return Response("ok")


def helper(request):
    subprocess.run("echo " + request, shell=True)  # $ command (a public function's parameter)
