import tarfile

from django.conf import settings
from django.http import HttpResponse


def import_theme(request):
    archive = request.FILES["archive"]
    with tarfile.open(fileobj=archive) as theme:
        theme.extractall(settings.MEDIA_ROOT, filter="data")
    return HttpResponse(status=201)
