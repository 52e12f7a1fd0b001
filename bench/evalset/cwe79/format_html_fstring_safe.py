from django.http import HttpResponse
from django.utils.html import format_html


def unsubscribe_done(request):
    email = request.GET.get("email", "")
    body = format_html("<p>{} will get no more mail.</p>", email)
    return HttpResponse(body)
