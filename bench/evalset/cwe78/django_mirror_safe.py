import subprocess

from django.http import Http404, HttpResponse


def mirror(request, name):
    if not name.isalnum():
        raise Http404()
    subprocess.call("wget -q https://mirror.example.com/" + name, shell=True)
    return HttpResponse("queued")
