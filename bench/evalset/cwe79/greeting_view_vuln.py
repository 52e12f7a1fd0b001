from django.shortcuts import render
from django.utils.safestring import mark_safe


def home(request):
    name = request.GET.get("name", "")
    greeting = mark_safe("<b>Hello, %s</b>" % name)
    return render(request, "home.html", {"greeting": greeting})
