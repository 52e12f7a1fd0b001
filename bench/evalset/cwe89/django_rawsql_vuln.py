from django.db.models.expressions import RawSQL
from django.http import JsonResponse

from .models import Order


def ranked(request):
    field = request.GET["field"]
    qs = Order.objects.annotate(rank=RawSQL("SELECT COUNT(*) FROM orders o2 WHERE o2.%s > orders.%s" % (field, field), ()))
    return JsonResponse({"n": qs.count()})
