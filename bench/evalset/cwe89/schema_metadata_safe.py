class SchemaEditor:
    def __init__(self, connection):
        self.connection = connection

    def execute(self, sql, params=()):
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)

    def clear_column(self, model, field):
        """Sets a column of a model's table to NULL before the column is dropped."""
        self.execute("UPDATE %s SET %s = NULL" % (model._meta.db_table, field.column))
