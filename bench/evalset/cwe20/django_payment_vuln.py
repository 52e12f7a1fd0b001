from xml.dom import minidom

from django.http import HttpResponse, HttpResponseBadRequest
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from .billing import record_payment


@csrf_exempt
@require_POST
def payment_notification(request):
    doc = minidom.parseString(request.body)
    nodes = doc.getElementsByTagName("TransactionId")
    if not nodes:
        return HttpResponseBadRequest("missing TransactionId")
    record_payment(nodes[0].firstChild.data)
    return HttpResponse("<ack/>", content_type="text/xml")
