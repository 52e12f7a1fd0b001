# Engine probe: a URL put together from its parts goes where its scheme, host and path say; data
# only in its query or fragment takes a redirect to no other site.
from urllib.parse import parse_qsl, urlencode, urlparse, urlsplit, urlunparse, urlunsplit

from django.http import HttpResponseRedirect


def encode(query):
    pairs = []
    for key, value in query.items():
        pairs.append((key, value))
    return urlencode(pairs)


def keep_filters_encoded(context, url):
    parts = list(urlparse(url))
    merged = {}
    merged.update(context.get("filters"))
    parts[4] = encode(merged)
    return urlunparse(parts)


def keep_filters(url, filters):
    parts = list(urlparse(url))
    query = dict(parse_qsl(parts[4]))
    query.update(dict(parse_qsl(filters)))
    parts[4] = urlencode(query)
    return urlunparse(parts)


def filtered(request):
    return HttpResponseRedirect(keep_filters("/admin/items/", request.GET.urlencode()))  # ok redirect


def encoded(request):
    filters = {"q": request.GET["q"]}
    return HttpResponseRedirect(keep_filters_encoded({"filters": filters}, "/admin/items/"))  # ok redirect


def encoded_host(request):
    return HttpResponseRedirect(keep_filters_encoded({}, request.GET["next"]))  # $ redirect


def searched(request):
    return HttpResponseRedirect(urlunsplit(("https", "example.com", "/find", request.GET["q"], "")))  # ok redirect


def hosted(request):
    return HttpResponseRedirect(urlunsplit(("https", request.GET["host"], "/find", "", "")))  # $ redirect


def pathed(request):
    return HttpResponseRedirect(urlunsplit(("", "", request.GET["path"], "", "")))  # $ redirect


def following(request):
    parts = list(urlsplit(request.GET["next"]))
    parts[3] = ""
    return HttpResponseRedirect(urlunsplit(parts))  # $ redirect


def kept(request):
    return HttpResponseRedirect(keep_filters(request.GET["next"], "page=2"))  # $ redirect
