from django.http import JsonResponse
from django.views import View

EXPRESSIONS = {"load": "1.5 * 2", "ratio": "3 / 4"}


class MetricView(View):
    def get(self, request):
        expression = EXPRESSIONS[self.request.GET["name"]]
        return JsonResponse({"value": eval(expression)})
