from django.http import JsonResponse
from django.views import View


class MetricView(View):
    def get(self, request):
        expression = self.request.GET["expr"]
        return JsonResponse({"value": eval(expression)})
