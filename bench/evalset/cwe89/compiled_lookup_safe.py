from django.db.models import Lookup


class TaggedWith(Lookup):
    lookup_name = "tagged"

    def __init__(self, lhs, rhs):
        super().__init__(lhs, rhs)
        self.value = rhs

    def as_sql(self, compiler, connection):
        lhs_sql, lhs_params = compiler.compile(self.lhs)
        sql = "%s IN (SELECT item_id FROM tags WHERE LOWER(name) = LOWER(%%s))" % lhs_sql
        return sql, [*lhs_params, self.value]
