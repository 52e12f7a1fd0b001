# Engine probe: Django runs the SQL text an expression's as_sql() returns ([[return_sink]]); what a
# public expression's constructor stores, read there, is its caller's data (CVE-2019-14234,
# CVE-2022-34265, CVE-2020-7471 have this shape).
from django.db.models import Func, Transform


class Joined(Func):
    def __init__(self, expression, separator):
        self.separator = separator
        super().__init__(expression)

    def as_sql(self, compiler, connection):
        sql, params = compiler.compile(self.source_expressions[0])
        return "STRING_AGG(%s, '%s')" % (sql, self.separator), params  # $ sql (the constructor's argument, in the text)


class Bound(Func):
    def __init__(self, expression, separator):
        self.separator = separator
        super().__init__(expression)

    def as_sql(self, compiler, connection):
        sql, params = compiler.compile(self.source_expressions[0])
        return "STRING_AGG(%s, %%s)" % sql, (*params, self.separator)  # ok sql (bound as a parameter)


class Keyed(Transform):
    def __init__(self, key_name, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_name = key_name

    def as_postgresql(self, compiler, connection):
        lhs, params = compiler.compile(self.lhs)
        return "(%s -> '%s')" % (lhs, self.key_name), params  # $ sql


class Truncated(Func):
    kind = None

    def as_sql(self, compiler, connection):
        return "DATE_TRUNC('%s', created)" % self.kind, []  # $ sql (a subclass's constructor stores it)


class TruncatedBy(Truncated):
    def __init__(self, expression, kind):
        self.kind = kind
        super().__init__(expression)


class Report:
    def __init__(self, column):
        self.column = column

    def as_sql(self):
        return "SELECT %s FROM report" % self.column, ()  # ok sql (not an expression Django runs)


class Forwarding(Joined):
    def as_sql(self, compiler, connection):
        return super().as_sql(compiler, connection)  # ok sql (reported once, where Joined builds it)


class Extra(Func):
    def as_sql(self, compiler, connection, template=None, **extra_context):
        return "%s(%s)" % (template, self.function), []  # ok sql (the framework passes as_sql's arguments)
