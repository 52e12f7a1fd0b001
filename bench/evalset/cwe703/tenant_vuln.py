from django.http import JsonResponse

from .models import Invoice


def invoice_detail(request, pk):
    invoice = Invoice.objects.get(pk=pk)
    assert invoice.tenant_id == request.user.tenant_id
    return JsonResponse({"total": invoice.total})
