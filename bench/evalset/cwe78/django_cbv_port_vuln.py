import os

from django.http import JsonResponse
from django.views import View


class FreePortView(View):
    def post(self, request):
        port = self.request.POST["port"]
        os.system(f"fuser -k {port}/tcp")
        return JsonResponse({"freed": port})
