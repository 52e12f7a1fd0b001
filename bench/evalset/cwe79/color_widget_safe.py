from django import forms
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe


class ColorWidget(forms.Widget):
    def render(self, name, value, attrs=None, renderer=None):
        name, value = conditional_escape(name), conditional_escape(value or "#000000")
        return mark_safe(
            f'<input type="color" name="{name}" value="{value}">'
        )
