import json

from django.shortcuts import render
from django.utils.safestring import mark_safe

_JSON_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def dashboard(request):
    state = {"user": request.user.get_username(), "filter": request.GET.get("filter", "")}
    initial = mark_safe(json.dumps(state).translate(_JSON_ESCAPES))
    return render(request, "dashboard.html", {"initial_state": initial})
