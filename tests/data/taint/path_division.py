# Engine probe: ``folder / name`` joins paths when the folder's type is not known here (a
# setting, an object's attribute), since text never divides a number; numbers still divide.
# And a framework object's routing method routes whatever its rule is built from.
from django.conf import settings
from django.http import FileResponse, HttpResponse
from fastapi import FastAPI
from fastapi.responses import FileResponse as Sent

from .release import __version__

api = FastAPI()


def media(request):
    return FileResponse(open(settings.MEDIA_ROOT / request.GET["f"], "rb"))  # $ path


def from_store(request, store):
    name = request.GET["f"]
    return FileResponse(open(store.root / "files" / name, "rb"))  # $ path


def share(request):
    count = int(request.GET["n"])
    return HttpResponse(open("/srv/%s.txt" % (100 / count)).read())  # ok path (a number)


@api.get(f"/assets/{__version__}" + "/{name:path}")
def asset(name: str):
    return Sent(settings.STATIC_ROOT / name)  # $ path


@api.get(__version__)
def by_version(name: str):
    return Sent(settings.STATIC_ROOT / name)  # $ path
