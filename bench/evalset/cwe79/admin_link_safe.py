from django.contrib import admin
from django.utils.html import format_html

from .models import Partner


@admin.register(Partner)
class PartnerAdmin(admin.ModelAdmin):
    list_display = ("name", "website_link")

    @admin.display(description="Website")
    def website_link(self, obj):
        return format_html('<a href="{}">{}</a>', obj.website, obj.name)
