from django.utils.html import escape
from django.utils.safestring import SafeString


def render_cells(row):
    """Renders one table row of values imported from a customer's CSV."""
    return SafeString("".join(f"<td>{escape(value)}</td>" for value in row))
