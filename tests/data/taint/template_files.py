# Engine probe: outside data written into a file under a "templates" folder whose name ends like
# a template is rendered as template code (server-side template injection); the folder and
# the end survive os.path.join, "+" and f-strings, and a file elsewhere is not a template.
import os

from django.http import HttpResponse
from django.shortcuts import render

BASE = os.path.dirname(__file__)


def publish(request):
    text = "{% extends 'base.html' %}" + request.POST["text"] + "{% endblock %}"
    name = request.POST["name"]
    path = os.path.join(BASE, f"templates/pages/{name}.html")
    with open(path, "w") as page:  # $ path
        page.write(text)  # $ ssti
    other = open(BASE + "/templates/mail/" + "welcome.txt", "a")
    other.write(text)  # $ ssti
    with open(os.path.join(BASE, "templates", "pages", name + ".html"), "w") as page:  # $ path
        page.write(text)  # $ ssti
    with open(os.path.join(BASE, "static", "page.html"), "w") as static:
        static.write(text)  # ok ssti (not under a templates folder)
    with open(os.path.join(BASE, "templates", "data.json"), "w") as data:
        data.write(text)  # ok ssti (not a template's name)
    return render(request, "pages/index.html")


def read(request):
    with open(os.path.join(BASE, "templates/pages/index.html")) as page:
        return HttpResponse(page.read())  # ok ssti (read, not written)
