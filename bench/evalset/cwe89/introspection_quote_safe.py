from collections import namedtuple

FieldInfo = namedtuple("FieldInfo", "name type_code null")


class DatabaseIntrospection:
    def __init__(self, connection):
        self.connection = connection

    def get_table_description(self, cursor, table_name):
        """Returns the columns of a table the database itself lists."""
        cursor.execute(
            "SELECT * FROM %s LIMIT 1" % self.connection.ops.quote_name(table_name)
        )
        return [FieldInfo(line[0], line[1], line[6]) for line in cursor.description]
