import xml.etree.ElementTree as ET

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect

from catalog.models import Product


@login_required
def import_catalog(request):
    upload = request.FILES["catalog"]
    for _event, elem in ET.iterparse(upload, events=("end",)):
        if elem.tag == "product":
            Product.objects.update_or_create(sku=elem.get("sku"), defaults={"name": elem.findtext("name", "")})
            elem.clear()
    return redirect("catalog:index")
