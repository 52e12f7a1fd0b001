from django import template
from django.utils.html import escape
from django.utils.safestring import SafeData, mark_safe

register = template.Library()


@register.filter(is_safe=True, needs_autoescape=True)
def linebreaksbr(value, autoescape=True):
    if autoescape and not isinstance(value, SafeData):
        value = escape(value)
        return mark_safe(value.replace("\n", "<br>"))
    return value.replace("\n", "<br>")
