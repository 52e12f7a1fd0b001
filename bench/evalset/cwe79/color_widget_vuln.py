from django import forms
from django.utils.safestring import mark_safe


class ColorWidget(forms.Widget):
    def render(self, name, value, attrs=None, renderer=None):
        return mark_safe(
            f'<input type="color" name="{name}" value="{value or "#000000"}">'
        )
