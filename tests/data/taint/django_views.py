# Engine probe: Django's request parameter convention, class-based views, raw SQL, sessions.
import subprocess

from django.db import connection
from django.http import HttpResponse, HttpResponseRedirect
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views import View


def search(request):
    term = request.GET.get("q", "")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM item WHERE name LIKE '%" + term + "%'")  # $ sql
        cursor.execute("SELECT id FROM item WHERE name LIKE %s", ["%" + term + "%"])  # ok sql
    request.session["last"] = term  # $ trust-boundary
    return HttpResponse("Results for " + term)  # $ xss


def greet(request):
    name = request.POST["name"]
    safe = format_html("<b>{}</b>", name)  # ok xss
    unsafe = mark_safe("<b>%s</b>" % name)  # $ xss
    return HttpResponse(safe + unsafe, content_type="text/plain")  # ok xss


def bounce(request):
    target = request.GET["next"]
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={"example.com"}):
        target = "/"
    return HttpResponseRedirect(target)  # ok redirect


class ReportView(View):
    def get(self, request, report_id):
        fmt = request.GET.get("format", "pdf")
        subprocess.run("render --format " + fmt + " " + report_id, shell=True)  # $ command
        return HttpResponse("queued")  # ok xss


def bounce_checked_first(request):
    target = request.POST.get("next")
    ok = url_has_allowed_host_and_scheme(url=target, allowed_hosts={"example.com"})
    if ok:
        return HttpResponseRedirect(target)  # ok redirect
    return HttpResponseRedirect(target)  # $ redirect


def moved(request):
    response = HttpResponse(status=302)
    response["Location"] = request.GET["next"]  # $ redirect $ header
    response["Cache-Control"] = request.GET["cache"]  # $ header
    return response


def announce(request):
    labels = {"name": request.POST["name"]}
    return HttpResponse(format_html("<b>{name}</b> was saved", **labels))  # ok xss (format_html escapes what fills it)


def announce_starred(request):
    return HttpResponse(format_html(*[request.GET["t"]], "x"))  # $ xss (the unpacked list comes first: it is the text)


def announce_raw(request):
    labels = {"format_string": request.POST["name"]}
    return HttpResponse(format_html(**labels))  # $ xss (the unpacked keywords may be the format itself)


def add_slash(request):
    return HttpResponseRedirect(request.get_full_path() + "/")  # $ redirect (the verdict: uncertain, the request's own path)


def go_next(request):
    return HttpResponseRedirect(request.get_full_path() + request.GET["next"])  # $ redirect


def set_next(request):
    target = request.POST.get("next", request.GET.get("next"))
    if (target or request.accepts("text/html")) and not url_has_allowed_host_and_scheme(url=target, allowed_hosts=None):
        target = "/"
    return HttpResponseRedirect(target) if target else HttpResponse(status=204)  # ok redirect (checked or replaced)


def set_next_loosely(request):
    target = request.POST.get("next")
    if request.accepts("text/html") and not url_has_allowed_host_and_scheme(url=target, allowed_hosts=None):
        target = "/"
    return HttpResponseRedirect(target)  # $ redirect (not checked when the client accepts no HTML)


class LinkView(View):
    template_name = "links.html"  # no such file: the template is not read

    def get(self, request):
        from django.shortcuts import render
        from django.utils.html import escape

        text = request.GET["text"]
        context = self.get_context_data()
        context["link"] = '<a href="https://example.org/%s">more</a>' % text
        render(request, self.template_name, context)  # $ xss (markup for a template: written unescaped)
        context = {"link": "<b>{}</b>".format(text)}
        render(request, "links.html", context)  # $ xss
        render(request, "links.html", {"link": f"<i>{escape(text)}</i>"})  # ok xss (escaped)
        render(request, "links.html", {"name": text, "greeting": "<b>hi</b>"})  # ok xss (no markup holds the data)
        render(request, "links.html", {"link": "<b>%s</b>".format(text)})  # ok xss (no field: format ignores it)
        render(request, "links.html", {"note": "<when> <what>: %s" % text})  # ok xss (no HTML element)
        return render(request, "links.html", {"note": "less than < 3: %s" % text})  # ok xss (no tag)
