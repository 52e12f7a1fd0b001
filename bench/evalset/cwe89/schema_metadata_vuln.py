class SchemaEditor:
    def __init__(self, connection):
        self.connection = connection

    def execute(self, sql, params=()):
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)

    def clear_column(self, table_name, column_name):
        """Sets a column of a table to NULL before the column is dropped."""
        self.execute("UPDATE %s SET %s = NULL" % (table_name, column_name))
