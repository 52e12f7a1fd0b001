"""Calls whose result is safe for a sink whatever their argument was.

A cast to a number is safe everywhere; ``shlex.quote`` only in a shell command line;
``psycopg2.sql.Identifier`` only in SQL; a signature check (``Signer.unsign``) or bytes this
process serialised itself (``pickle.dumps``) only for deserialisation; HTML escaping
(``escape``, ``format_html``) and template rendering only in text marked safe as HTML. So is
``text.translate(TABLE)`` with a constant table that replaces ``<``, ``>`` and ``&`` by text
holding none of them (``{ord("<"): "\\u003C", ...}``, as Django's ``json_script`` does): no
markup can be written with what is left (``html_translation``).

Two weaker kinds, for SQL only, are answered separately because they do not hold against an
attacker who chooses the value:

* identifier quoting (``connection.ops.quote_name``, ``quote_ident``): it wraps a table or
  column name in quotes, and several implementations (Django's among them) do not escape a
  quote inside the name; a quoted name is safe when it comes from the schema or the code,
  not when it comes from a request (``identifier_quoter``);
* SQL builders (``compiler.compile(node)``, ``expr.as_sql(...)``): their result is SQL text
  whose values travel separately as parameters; composing such fragments is not injection,
  and whether the builder itself is safe is a question for the builder (``sql_builder``).
"""

from __future__ import annotations

import ast

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
    "html": frozenset({
        "html.escape", "cgi.escape", "markupsafe.escape", "flask.escape", "jinja2.escape",
        "bleach.clean", "nh3.clean", "urllib.parse.quote", "urllib.parse.quote_plus",
        "urllib.parse.urlencode",
        *(f"{module}{name}" for module in ("", "django.utils.html.") for name in (
            "escape", "conditional_escape", "format_html", "format_html_join", "escapejs",
            "json_script", "strip_tags", "escape_uri_path")),
        "render_to_string", "django.template.loader.render_to_string", "flask.render_template",
        "render_template", "flask.render_template_string",
    }),
}
# Methods whose result is escaped HTML: template rendering (the engine escapes every variable)
# and form/error-list rendering, which goes through templates.
_HTML_METHODS = frozenset({"render", "render_to_string", "render_annotated", "as_ul", "as_p",
                           "as_table", "as_div", "as_text", "escape"})
# Functions and methods that put a table or column name in identifier quotes.
IDENTIFIER_QUOTERS = frozenset({
    "quote_name", "quote_name_unless_alias", "quote_ident", "quote_identifier",
    "quote_identifiers", "escape_identifier", "quote_table_name", "quote_column_name",
    "_quote_name", "_quote_identifier",
})
# Methods that compile a query expression into SQL text plus a separate list of parameters.
SQL_BUILDERS = frozenset({"as_sql", "compile", "sql_with_params", "as_sqlite", "as_postgresql",
                          "as_mysql", "as_oracle"})
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
        if sink == "html" and method in _HTML_METHODS:
            return f".{method}() (template rendering escapes every variable)"
    return None


def identifier_quoter(name: str | None, sink: str) -> str | None:
    """Tells whether a call (by its function's or method's last name) quotes an SQL identifier.

    Args:
        name: The called function's or method's name; dotted names are cut to the last part.
        sink: The sink the value reaches (only ``"sql"`` is answered).

    Returns:
        A description for rationales, or None.
    """
    if sink != "sql" or not name:
        return None
    short = name.rsplit(".", 1)[-1]
    return f"the identifier quoting of {short}()" if short in IDENTIFIER_QUOTERS else None


def sql_builder(method: str | None, sink: str) -> str | None:
    """Tells whether a method call compiles a query expression into SQL with separate parameters.

    Args:
        method: The called method's name.
        sink: The sink the value reaches (only ``"sql"`` is answered).

    Returns:
        A description for rationales, or None.
    """
    if sink != "sql" or method not in SQL_BUILDERS:
        return None
    return f"SQL compiled by .{method}(), whose values travel as separate parameters"


# Characters a translation table must replace for its result to be inert as HTML text.
_HTML_SPECIALS = frozenset("<>&")


def html_translation(table: ast.expr | None) -> str | None:
    """Tells whether a ``str.translate`` table escapes the characters that start markup.

    Args:
        table: The table, resolved to its constant display (a dict, or ``str.maketrans(dict)``).

    Returns:
        A description for rationales when the table maps each of ``<``, ``>`` and ``&`` to text
        containing none of them (or deletes it), and every key and value is a constant; else None.
    """
    if isinstance(table, ast.Call) and isinstance(table.func, ast.Attribute) and table.func.attr == "maketrans" \
            and len(table.args) == 1 and not table.keywords:
        table = table.args[0]
    if not isinstance(table, ast.Dict) or not table.keys:
        return None
    replaced: set[str] = set()
    for key, value in zip(table.keys, table.values):
        char = _table_char(key)
        if char is None or not (isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, str))):
            return None
        if char in _HTML_SPECIALS:
            if isinstance(value.value, str) and set(value.value) & _HTML_SPECIALS:
                return None
            replaced.add(char)
    if replaced != _HTML_SPECIALS:
        return None
    return ".translate() with a table that replaces <, > and & (no markup survives it)"


def _table_char(key: ast.expr | None) -> str | None:
    """The character a translation-table key stands for: ``ord("<")``, ``60`` or ``"<"``."""
    if isinstance(key, ast.Constant) and isinstance(key.value, int) and not isinstance(key.value, bool) and 0 <= key.value < 0x110000:
        return chr(key.value)
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and len(key.value) == 1:
        return key.value
    if (isinstance(key, ast.Call) and isinstance(key.func, ast.Name) and key.func.id == "ord" and len(key.args) == 1
            and isinstance(key.args[0], ast.Constant) and isinstance(key.args[0].value, str) and len(key.args[0].value) == 1):
        return key.args[0].value
    return None
