from xml.dom import minidom

import defusedxml
from django.http import JsonResponse
from django.views import View

defusedxml.defuse_stdlib()


class KmlPreviewView(View):
    def post(self, request):
        doc = minidom.parse(request.FILES["kml"])
        names = [node.firstChild.data for node in doc.getElementsByTagName("name") if node.firstChild]
        return JsonResponse({"placemarks": names})
