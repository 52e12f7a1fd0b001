import xml.etree.ElementTree as ET

from reports.export import orders_to_xml


def test_export_lists_every_order():
    document = orders_to_xml([{"id": 1, "total": "9.50"}, {"id": 2, "total": "3.00"}])
    root = ET.fromstring(document)
    assert [o.get("id") for o in root.iter("order")] == ["1", "2"]
