import os

from django.http import HttpResponse, HttpResponseBadRequest

ALLOWED_FORMATS = {"png", "jpg", "webp"}


def convert(request):
    fmt = request.GET.get("format", "png")
    os.system("convert /srv/in/source.tiff /srv/out/result.%s" % fmt)
    return HttpResponse("ok")
