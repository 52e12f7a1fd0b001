from django.contrib import admin
from django.utils.safestring import mark_safe

from .models import Partner


@admin.register(Partner)
class PartnerAdmin(admin.ModelAdmin):
    list_display = ("name", "website_link")

    @admin.display(description="Website")
    def website_link(self, obj):
        return mark_safe(f'<a href="{obj.website}">{obj.name}</a>')
