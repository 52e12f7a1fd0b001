from django.http import HttpResponse
from django.template import Context, Template
from django.utils.safestring import mark_safe

PAGE = Template("<div class='comment'>{{ body }}</div>")


def preview(request):
    body = request.POST.get("body", "")
    html = PAGE.render(Context({"body": mark_safe(body.replace("\n", "<br>"))}))
    return HttpResponse(html)
