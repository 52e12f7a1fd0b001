"""Rewrites of injection: a shell command string to an argument list, string-built SQL to
parameters."""

from __future__ import annotations

import ast
import re
from typing import Any

from .nodes import Change, NoRewrite, Site, argument, assigned, constant_parts, dotted, is_true, keyword, remove_keyword
from .strings import Piece, literal
from .text import Edit, Source


# -- command: a shell string -> an argument list without shell=True ---------------------

_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_\-./:=,@+%\s]*$")


def shell_to_argv(src: Source, call: ast.Call, site: Site) -> Change:
    """``subprocess.run("cmd " + x, shell=True)`` -> ``subprocess.run(["cmd", x])``: each
    value becomes one argument that no shell reads. Only for constant text free of shell
    syntax (quotes around a whole value are dropped); anything else is left to a person."""
    api = site.api or dotted(call.func) or ""
    if not api.startswith("subprocess."):
        raise NoRewrite(f"no safe rewrite known for {api}(): it runs a shell with no argument-list form; "
                        "call subprocess.run([...]) with a list by hand")
    shell = keyword(call, "shell")
    if shell is None or not is_true(shell.value):
        raise NoRewrite("the call is already safe: it runs no shell (shell=True is not passed)")
    command = call.args[0] if call.args else (keyword(call, "args").value if keyword(call, "args") else None)  # type: ignore[union-attr]
    if command is None:
        raise NoRewrite("the command is not passed as the first argument")
    value, _ = assigned(src, call, command)
    parts = constant_parts(value)
    argv = _split(parts, src)
    new = "[" + ", ".join(argv) + "]"
    start, end = src.span(value)
    return Change(name="shell-to-argv", edits=[Edit(start=start, end=end, new=new), remove_keyword(src, call, shell)],
                  expected=("B603", "B607"),
                  rationale=f"the command string was run by a shell, so outside data in it could add commands; as "
                            f"an argument list without shell=True each value is one argument of {argv[0]} that no shell "
                            "parses (bandit's B603 and B607 notes on a list-form call remain: they flag every such call)")


def _split(parts: list[Piece], src: Source) -> list[str]:
    """The argument list (Python expressions) of a shell command built from pieces.

    Raises:
        NoRewrite: the constant text holds shell syntax, or a value is not a whole word.
    """
    words: list[list[Piece]] = [[]]
    for n, piece in enumerate(parts):
        if piece.node is not None:
            words[-1].append(piece)
            continue
        text = piece.text or ""
        # quotes around a whole value: "... '" + x + "' ..." -> the value alone
        before = parts[n - 1] if n else None
        after = parts[n + 1] if n + 1 < len(parts) else None
        if after is not None and after.node is not None and text[-1:] in "'\"" and text[-1:]:
            following = parts[n + 2].text if n + 2 < len(parts) and parts[n + 2].text is not None else None
            if following is not None and following[:1] == text[-1]:
                text = text[:-1]
        if before is not None and before.node is not None and text[:1] in "'\"" and text[:1] and n >= 2 \
                and (parts[n - 2].text or "")[-1:] == text[:1]:
            text = text[1:]
        if not _SHELL_SAFE.match(text):
            bad = sorted({c for c in text if not _SHELL_SAFE.match(c)})
            raise NoRewrite(f"the command's constant text holds shell syntax ({' '.join(bad)}), so it cannot be "
                            "split into arguments with certainty")
        for k, chunk in enumerate(re.split(r"(\s+)", text)):
            if not chunk:
                continue
            if chunk.isspace():
                if words[-1]:
                    words.append([])
            else:
                words[-1].append(Piece(text=chunk))
    argv = []
    for word in words:
        if not word:
            continue
        if len(word) == 1 and word[0].text is not None:
            argv.append(literal(word[0].text))
        elif len(word) == 1:  # a value formatted in may be any type; an argument must be text
            text = src.segment(word[0].node)  # type: ignore[arg-type]
            argv.append(f"str({text})" if word[0].formatted else text)
        else:
            argv.append("f" + literal("".join(
                (p.text or "").replace("{", "{{").replace("}", "}}") if p.node is None
                else "{" + src.segment(p.node) + "}" for p in word)))
    if not argv or argv[0][:1] not in "\"'":
        raise NoRewrite("the program to run is itself outside data; no argument list makes that safe")
    return argv


# -- SQL: string-built SQL -> parameters ---------------------------------------------------

_PARAMSTYLE = (("sqlite3", "?"), ("aiosqlite", "?"), ("pysqlite2", "?"), ("psycopg2", "%s"), ("psycopg", "%s"),
               ("pymysql", "%s"), ("MySQLdb", "%s"), ("mysql.connector", "%s"), ("pgdb", "%s"), ("aiopg", "%s"),
               ("aiomysql", "%s"), ("django.db", "%s"))
"""DB-API drivers and their parameter markers (PEP 249 ``paramstyle``: qmark or format)."""
_BEFORE_VALUE = re.compile(r"(=|<|>|\(|,|\b(?:like|in|limit|offset|is|not|and|or|values|then|else|when|between))\s*$",
                           re.IGNORECASE)


def sql_parameters(src: Source, call: ast.Call, site: Site) -> Change:
    """``cur.execute("... '" + x + "'")`` -> ``cur.execute("... ?", (x,))`` (the driver's own
    marker, from the driver the file imports); ``text("... " + x)`` of SQLAlchemy inside an
    ``execute`` -> ``:p1`` and a parameter mapping. Values must stand where a value may
    (after ``=``, ``IN (``, ``LIKE``...), whole inside their quotes; an identifier (a table,
    a column, ``ORDER BY x``) cannot be a parameter and is left to a person."""
    api = site.api or ""
    if api.startswith("sqlalchemy.") or dotted(call.func) in ("text", "sqlalchemy.text", "sa.text"):
        return _sqlalchemy(src, call, site)
    raw = api.startswith("django.") and api.endswith(".raw")
    if site.api is not None and not raw and not api.startswith("pep249.") and not re.search(r"\.execute(many)?$", api):
        raise NoRewrite(f"no safe rewrite known for SQL run by {api}")
    imports = src.imports()
    style = "%s" if raw else next((marker for module, marker in _PARAMSTYLE if module in imports), None)
    if style is None:
        raise NoRewrite("the database driver is not imported by this file, so its parameter marker (? or %s) is "
                        "not known")
    sql = argument(call, site.role or "argument 1")
    if len(call.args) > 1 or call.keywords:
        raise NoRewrite("the call passes parameters already; merging them is left to a person")
    value, through_name = assigned(src, call, sql)
    text, values = _bind(constant_parts(value), lambda n: style, style == "%s")
    listed = ", ".join(src.segment(v) for v in values)
    params = f"[{listed}]" if raw else "(" + listed + ("," if len(values) == 1 else "") + ")"
    start, end = src.span(value)
    if through_name:  # q = "..." -> q = "... ?"; execute(q) -> execute(q, (x,))
        after = src.span(sql)[1]
        edits = [Edit(start=start, end=end, new=literal(text)), Edit(start=after, end=after, new=f", {params}")]
    else:
        edits = [Edit(start=start, end=end, new=f"{literal(text)}, {params}")]
    return Change(name="sql-parameters", edits=edits,
                  rationale=f"the SQL text was built from outside data, so that data could change the statement; "
                            f"passed as parameters ({style}) the driver sends it as values, never as SQL")


def _sqlalchemy(src: Source, call: ast.Call, site: Site) -> Change:
    if isinstance(call.func, ast.Attribute) and call.func.attr == "execute":  # the sink is execute(text(...))
        inner = call.args[0] if call.args else None
        if not (isinstance(inner, ast.Call) and (dotted(inner.func) or "").rsplit(".", 1)[-1] == "text"):
            raise NoRewrite("execute() is given SQL that is not a text() call here; left to a person")
        text_call, parent = inner, call
    else:
        text_call, parent = call, _parent_call(src, call)
    if parent is None or not isinstance(parent.func, ast.Attribute) or parent.func.attr != "execute" \
            or not parent.args or parent.args[0] is not text_call:
        raise NoRewrite("text() is not passed straight to an execute() call, so where its parameters go is not known")
    if len(parent.args) > 1 or parent.keywords:
        raise NoRewrite("the execute() call passes parameters already; merging them is left to a person")
    if not text_call.args:
        raise NoRewrite("text() has no positional SQL argument")
    text, values = _bind(constant_parts(text_call.args[0]), lambda n: f":p{n}", False)
    start, end = src.span(text_call.args[0])
    after = src.span(text_call)[1]
    mapping = "{" + ", ".join(f'"p{n}": {src.segment(v)}' for n, v in enumerate(values, start=1)) + "}"
    return Change(name="sql-parameters", edits=[Edit(start=start, end=end, new=literal(text)),
                                                Edit(start=after, end=after, new=f", {mapping}")],
                  rationale="the SQL text given to text() was built from outside data; with bound parameters "
                            "(:p1...) SQLAlchemy sends it as values, never as SQL")


def _parent_call(src: Source, node: ast.AST) -> ast.Call | None:
    for parent in ast.walk(src.tree):
        if isinstance(parent, ast.Call) and any(a is node for a in parent.args):
            return parent
    return None


def _bind(parts: list[Piece], marker: Any, percent: bool) -> tuple[str, list[ast.expr]]:
    """The SQL text with markers for the values, and the values in order.

    Raises:
        NoRewrite: a value stands where a parameter cannot (an identifier, part of a literal).
    """
    out: list[str] = []
    values: list[ast.expr] = []
    texts = [p.text for p in parts]
    skip_quote = False
    for n, piece in enumerate(parts):
        if piece.node is None:
            text = piece.text or ""
            if skip_quote:
                text = text[1:]
                skip_quote = False
            out.append(text.replace("%", "%%") if percent else text)
            continue
        before = "".join(out)
        after = texts[n + 1] if n + 1 < len(parts) and texts[n + 1] is not None else ""
        quote = before[-1:] if before[-1:] in ("'", '"') and before.count(before[-1]) % 2 else ""
        if quote or before.count("'") % 2:
            if not quote or after[:1] != quote:
                raise NoRewrite("a value is part of a quoted SQL literal (not all of it), so it cannot be one parameter")
            out[-1] = out[-1][:-1]
            skip_quote = True
        elif not _BEFORE_VALUE.search(before):
            raise NoRewrite("a value stands where SQL expects a name or a keyword (a table, a column, ORDER BY), "
                            "which a parameter cannot hold; check it against a fixed list instead")
        values.append(piece.node)
        out.append(marker(len(values)))
    text = "".join(out)
    if (not percent and "?" in text.replace(marker(1), "") and marker(1) == "?"):
        raise NoRewrite("the SQL text holds a literal '?', which the driver would read as a marker")
    return text, values
