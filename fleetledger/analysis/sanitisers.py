"""Calls whose result is safe for a sink whatever their argument was.

A cast to a number is safe everywhere; ``shlex.quote`` only in a shell command line;
``psycopg2.sql.Identifier`` only in SQL; a signature check (``Signer.unsign``) or bytes this
process serialised itself (``pickle.dumps``) only for deserialisation.
"""

from __future__ import annotations

from .sinks import SinkKind

# Results are numbers, booleans, UUIDs or hex digests: no sink can be injected through them.
_ANY_SINK = frozenset({
    "int", "float", "bool", "len", "abs", "round", "ord", "hash", "id", "complex",
    "uuid.UUID", "decimal.Decimal", "math.floor", "math.ceil", "datetime.date.fromisoformat",
    "datetime.datetime.fromisoformat", "datetime.datetime.strptime", "ipaddress.ip_address",
    "ipaddress.ip_network",
})
# Methods whose result is a number, a boolean or hex text, whatever the receiver held.
SAFE_RESULT_METHODS = frozenset({
    "hexdigest", "digest", "count", "index", "find", "rfind", "startswith", "endswith",
    "isdigit", "isdecimal", "isnumeric", "isalnum", "isalpha", "isidentifier", "isascii",
    "islower", "isupper", "isspace", "bit_length", "total_seconds", "timestamp", "isoformat",
    "is_file", "is_dir", "exists", "__len__",
})
_PER_SINK: dict[str, frozenset[str]] = {
    "shell": frozenset({"shlex.quote", "pipes.quote", "shlex.join", "werkzeug.utils.secure_filename",
                        "secure_filename"}),
    "sql": frozenset({"psycopg2.sql.Identifier", "psycopg2.sql.Literal", "psycopg.sql.Identifier",
                      "psycopg.sql.Literal", "sql.Identifier", "sql.Literal",
                      "MySQLdb.escape_string", "pymysql.converters.escape_string",
                      "sqlalchemy.bindparam", "sqlalchemy.sql.bindparam"}),
    "data": frozenset({"pickle.dumps", "marshal.dumps", "yaml.dump", "yaml.safe_dump",
                       "dill.dumps", "cPickle.dumps"}),
}
# Method names that verify a signature and return the signed payload (itsdangerous, hmac).
_VERIFYING_METHODS = frozenset({"unsign", "loads_unsafe_verified"})


def call_sanitiser(name: str | None, method: str | None, sink: SinkKind) -> str | None:
    """Tells whether a call's result is safe for ``sink``.

    Args:
        name: The call's qualified name (``"shlex.quote"``), or None if not a dotted name.
        method: The called method's name when the call is ``obj.method(...)``, else None.
        sink: The sink the value reaches.

    Returns:
        A short description of the sanitiser (``"shlex.quote()"``), or None.
    """
    if name is not None and (name in _ANY_SINK or name in _PER_SINK.get(sink, frozenset())):
        return f"{name}()"
    if method is not None:
        if method in SAFE_RESULT_METHODS:
            return f".{method}() (returns a number, a boolean or hex text)"
        if sink == "data" and method in _VERIFYING_METHODS:
            return f".{method}() (verifies a signature before returning the payload)"
    return None
