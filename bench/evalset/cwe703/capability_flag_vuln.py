from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from .models import Order


def delete_order(request, pk):
    order = get_object_or_404(Order, pk=pk)
    assert request.user.can_delete_orders
    order.delete()
    return HttpResponse(status=204)
