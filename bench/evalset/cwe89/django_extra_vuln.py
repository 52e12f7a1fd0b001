from django.http import JsonResponse

from .models import Product


def products(request):
    name = request.GET.get("name", "")
    qs = Product.objects.extra(where=["name LIKE '%%%s%%'" % name])
    return JsonResponse({"ids": list(qs.values_list("id", flat=True))})
