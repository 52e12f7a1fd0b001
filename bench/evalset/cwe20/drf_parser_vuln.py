import xml.etree.ElementTree as ET

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser


class XMLParser(BaseParser):
    """Parses XML request bodies into dicts for the partner API."""

    media_type = "application/xml"

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            tree = ET.parse(stream)
        except ET.ParseError as exc:
            raise ParseError(f"XML parse error - {exc}") from exc
        return {child.tag: child.text for child in tree.getroot()}
