class InsertCompiler:
    def __init__(self, query, connection):
        self.query = query
        self.connection = connection

    def execute_sql(self, returning_fields=None):
        assert not (
            returning_fields
            and len(self.query.objs) != 1
            and not self.connection.features.can_return_rows_from_bulk_insert
        )
        with self.connection.cursor() as cursor:
            cursor.execute(self.query.sql, self.query.params)
