import json

from django.shortcuts import render
from django.utils.safestring import mark_safe


def dashboard(request):
    state = {"user": request.user.get_username(), "filter": request.GET.get("filter", "")}
    initial = mark_safe(json.dumps(state))
    return render(request, "dashboard.html", {"initial_state": initial})
