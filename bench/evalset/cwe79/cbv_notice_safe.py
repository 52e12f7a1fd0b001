import bleach
from django.utils.safestring import mark_safe
from django.views.generic import TemplateView


class AccountView(TemplateView):
    template_name = "account.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        notice = self.request.GET.get("notice", "")
        context["notice"] = mark_safe(bleach.clean(notice, tags={"b", "i", "em", "strong"}, strip=True))
        return context
