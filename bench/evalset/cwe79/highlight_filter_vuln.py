from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def highlight(text, term):
    if not term:
        return text
    return mark_safe(text.replace(term, f"<mark>{term}</mark>"))
