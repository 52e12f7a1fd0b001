import markdown
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST


@require_POST
def preview_comment(request):
    rendered = markdown.markdown(request.POST.get("body", ""))
    html = mark_safe(rendered)
    return render(request, "comments/preview.html", {"html": html})
