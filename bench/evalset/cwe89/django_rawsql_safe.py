from django.db.models.expressions import RawSQL
from django.http import JsonResponse

from .models import Order


def ranked(request):
    minimum = request.GET["minimum"]
    qs = Order.objects.annotate(big=RawSQL("SELECT COUNT(*) FROM orders o2 WHERE o2.total > %s", (minimum,)))
    return JsonResponse({"n": qs.count()})
