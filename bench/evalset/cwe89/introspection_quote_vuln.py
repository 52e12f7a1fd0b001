from django.db import connection
from django.http import JsonResponse


def table_columns(request):
    table_name = request.GET["table"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM %s LIMIT 1" % connection.ops.quote_name(table_name)
        )
        return JsonResponse({"columns": [c[0] for c in cursor.description]})
