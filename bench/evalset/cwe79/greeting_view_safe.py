from django.shortcuts import render
from django.utils.html import escape
from django.utils.safestring import mark_safe


def home(request):
    name = request.GET.get("name", "")
    greeting = mark_safe("<b>Hello, %s</b>" % escape(name))
    return render(request, "home.html", {"greeting": greeting})
