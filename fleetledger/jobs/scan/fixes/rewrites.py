"""The safe rewrites the offline fixer knows, one function per weakness, each driven by the
library API the engine's trace names at the sink (never by a name the analysed code chose).

Each rewrite gets the parsed file, the syntax node the finding points at and what the trace
says about it, and returns the edits (``Change``) or raises ``NoRewrite`` with the reason:
the value is constant, the call is already safe, the shape is one a rewrite cannot be sure of.
Where no safe rewrite is known the fixer says so rather than guess.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from .strings import Piece, literal, pieces
from .text import Edit, Source


class NoRewrite(Exception):
    """No safe rewrite is known for this finding; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Site:
    """Where a finding points and what its trace says.

    Attributes:
        kind: The weakness kind (``sql``, ``command``, ``weak-hash``...).
        api: The library API at the sink (``yaml.load``), or None for a bandit-only finding.
        role: The sink's role (``argument 1``, ``the returned value``), or "".
        line, col, end_line, end_col: The node's span (1-based lines, character columns;
            ``end_line`` and ``end_col`` may be None).
        source: The trace's source (``path``, ``line``, ``col``, ``channel``), or None.
    """

    kind: str
    api: str | None
    role: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None
    source: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Change:
    """A rewrite's edits, the modules it needs imported, its name and why it is safe."""

    name: str
    rationale: str
    edits: list[Edit]
    imports: tuple[str, ...] = ()
    expected: tuple[str, ...] = field(default=())
    """Detector rules a re-scan may report on the new code as a known, accepted residue of this
    rewrite (bandit's B603 note on every subprocess call with an argument list)."""


def _keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _argument(call: ast.Call, role: str) -> ast.expr:
    """The argument the sink's role names (``argument 2``), the first one by default.

    Raises:
        NoRewrite: the call has no such positional argument.
    """
    match = re.match(r"argument (\d+)", role)
    index = int(match.group(1)) - 1 if match else 0
    if index >= len(call.args) or isinstance(call.args[index], ast.Starred):
        raise NoRewrite(f"the value is not a plain positional argument of {_dotted(call.func) or 'the call'}()")
    return call.args[index]


def _constant_parts(node: ast.expr) -> list[Piece]:
    """The pieces of a string-built value that takes outside data.

    Raises:
        NoRewrite: the value is constant, or not built in place from text and values.
    """
    if isinstance(node, ast.Constant):
        raise NoRewrite("the value is constant: nothing from outside reaches the call")
    parts = pieces(node)
    if parts is None:
        raise NoRewrite(f"the value ({ast.unparse(node)[:80]}) is not built in place from constant text and values, "
                        "so where the outside data sits in it is not known")
    if not any(p.node is not None for p in parts):
        raise NoRewrite("the value is constant: nothing from outside reaches the call")
    return parts


def _remove_keyword(src: Source, call: ast.Call, kw: ast.keyword) -> Edit:
    """The edit that deletes a keyword argument with the comma before it (or after it)."""
    items: list[ast.AST] = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    index = items.index(kw)
    start, end = src.span(kw)
    if index > 0:
        start = src.span(items[index - 1])[1]
    elif len(items) > 1:
        end = src.span(items[1])[0]
    return Edit(start=start, end=end, new="")


def _assigned(src: Source, call: ast.Call, arg: ast.expr) -> tuple[ast.expr, bool]:
    """The value a sink's argument stands for: the argument itself, or, for a local name
    assigned once before the call (``q = "..." + x; cur.execute(q)``), the assigned value.

    Returns:
        ``(value, through_name)``.

    Raises:
        NoRewrite: the name is a parameter, global, assigned more than once or after the call,
            or read elsewhere (other than by ``print``), where a changed value would change
            what that code does.
    """
    if not isinstance(arg, ast.Name):
        return arg, False
    name = arg.id
    scope: ast.AST = src.tree
    for node in ast.walk(src.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _contains(node, call):
            scope = node  # the innermost: ast.walk visits outer functions first
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = scope.args
        if name in {a.arg for a in [*params.posonlyargs, *params.args, *params.kwonlyargs,
                                    *(x for x in (params.vararg, params.kwarg) if x)]}:
            raise NoRewrite(f"the value comes in as the parameter {name} of {scope.name}(); a rewrite there is left "
                            "to its callers")
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(scope)):
        raise NoRewrite(f"{name} is declared global or nonlocal")
    stores = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    assigns = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    if len(stores) != 1 or len(assigns) != 1:
        raise NoRewrite(f"the value is the variable {name}, assigned in {len(stores)} places; which value reaches the "
                        "call is not certain")
    assign = assigns[0]
    if (assign.end_lineno or assign.lineno) >= call.lineno:
        raise NoRewrite(f"{name} is assigned after the call (in a loop?)")
    printed = {id(n) for p in ast.walk(scope) if isinstance(p, ast.Call) and _dotted(p.func) == "print"
               for n in ast.walk(p)}
    others = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
              and n is not arg and id(n) not in printed]
    if others:
        raise NoRewrite(f"{name} is also used at line {others[0].lineno}, where a changed value would change what that "
                        "code does")
    return assign.value, True


# -- deserialization: yaml.load -> yaml.safe_load ----------------------------------------

_YAML_SAFE = {"load": "safe_load", "load_all": "safe_load_all", "unsafe_load": "safe_load",
              "unsafe_load_all": "safe_load_all", "full_load": "safe_load", "full_load_all": "safe_load_all"}
_SAFE_LOADERS = ("SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader")


def yaml_safe_load(src: Source, call: ast.Call, site: Site) -> Change:
    """``yaml.load(doc)`` (and ``load_all``, ``unsafe_load``, ``full_load``) ->
    ``yaml.safe_load(doc)``, which builds only plain data (no Python objects)."""
    api = site.api or ""
    if not api.startswith("yaml.") and site.api is not None:
        raise NoRewrite(f"no safe rewrite known for deserialization by {api}: it has no safe mode that keeps its "
                        "behaviour; parse a data format (JSON) instead")
    name = _dotted(call.func) or ""
    attr = name.rsplit(".", 1)[-1]
    if attr not in _YAML_SAFE:
        raise NoRewrite(f"{name}() is not a yaml loader this rewrite knows")
    loader = _keyword(call, "Loader") or (call.args[1] if len(call.args) > 1 else None)
    loader_name = _dotted(loader.value if isinstance(loader, ast.keyword) else loader) if loader is not None else None
    if loader_name and loader_name.rsplit(".", 1)[-1] in _SAFE_LOADERS:
        raise NoRewrite(f"the call is already safe: it passes Loader={loader_name}")
    if isinstance(call.args[0] if call.args else None, ast.Constant):
        raise NoRewrite("the value is constant: the document is a literal in the code")
    edits = []
    if isinstance(call.func, ast.Attribute):
        start, end = src.span(call.func)
        edits.append(Edit(start=end - len(attr), end=end, new=_YAML_SAFE[attr]))
        imports: tuple[str, ...] = ()
    else:
        start, end = src.span(call.func)
        edits.append(Edit(start=start, end=end, new=f"yaml.{_YAML_SAFE[attr]}"))
        imports = ("yaml",)
    if isinstance(loader, ast.keyword):
        edits.append(_remove_keyword(src, call, loader))
    elif loader is not None:
        edits.append(Edit(start=src.span(call.args[0])[1], end=src.span(loader)[1], new=""))
    return Change(name="yaml-safe-load", edits=edits, imports=imports,
                  rationale=f"{name}() builds arbitrary Python objects from the document it is given, which here "
                            f"comes from outside; yaml.{_YAML_SAFE[attr]}() builds only plain data (dicts, lists, "
                            "strings, numbers), which is what a document from outside may hold")


# -- command: a shell string -> an argument list without shell=True ---------------------

_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_\-./:=,@+%\s]*$")


def shell_to_argv(src: Source, call: ast.Call, site: Site) -> Change:
    """``subprocess.run("cmd " + x, shell=True)`` -> ``subprocess.run(["cmd", x])``: each
    value becomes one argument that no shell reads. Only for constant text free of shell
    syntax (quotes around a whole value are dropped); anything else is left to a person."""
    api = site.api or _dotted(call.func) or ""
    if not api.startswith("subprocess."):
        raise NoRewrite(f"no safe rewrite known for {api}(): it runs a shell with no argument-list form; "
                        "call subprocess.run([...]) with a list by hand")
    shell = _keyword(call, "shell")
    if shell is None or not _true(shell.value):
        raise NoRewrite("the call is already safe: it runs no shell (shell=True is not passed)")
    command = call.args[0] if call.args else (_keyword(call, "args").value if _keyword(call, "args") else None)  # type: ignore[union-attr]
    if command is None:
        raise NoRewrite("the command is not passed as the first argument")
    value, _ = _assigned(src, call, command)
    parts = _constant_parts(value)
    argv = _split(parts, src)
    new = "[" + ", ".join(argv) + "]"
    start, end = src.span(value)
    return Change(name="shell-to-argv", edits=[Edit(start=start, end=end, new=new), _remove_keyword(src, call, shell)],
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
    if api.startswith("sqlalchemy.") or _dotted(call.func) in ("text", "sqlalchemy.text", "sa.text"):
        return _sqlalchemy(src, call, site)
    raw = api.startswith("django.") and api.endswith(".raw")
    if site.api is not None and not raw and not api.startswith("pep249.") and not re.search(r"\.execute(many)?$", api):
        raise NoRewrite(f"no safe rewrite known for SQL run by {api}")
    imports = src.imports()
    style = "%s" if raw else next((marker for module, marker in _PARAMSTYLE if module in imports), None)
    if style is None:
        raise NoRewrite("the database driver is not imported by this file, so its parameter marker (? or %s) is "
                        "not known")
    sql = _argument(call, site.role or "argument 1")
    if len(call.args) > 1 or call.keywords:
        raise NoRewrite("the call passes parameters already; merging them is left to a person")
    value, through_name = _assigned(src, call, sql)
    text, values = _bind(_constant_parts(value), lambda n: style, style == "%s")
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
        if not (isinstance(inner, ast.Call) and (_dotted(inner.func) or "").rsplit(".", 1)[-1] == "text"):
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
    text, values = _bind(_constant_parts(text_call.args[0]), lambda n: f":p{n}", False)
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


# -- random numbers for a secret -> secrets ------------------------------------------------

_SECRETS = {"choice": "secrets.choice", "getrandbits": "secrets.randbits"}


def random_to_secrets(src: Source, call: ast.Call, site: Site) -> Change:
    """``random.X(...)`` -> ``secrets.choice``/``secrets.randbits`` or
    ``secrets.SystemRandom().X(...)`` (the operating system's generator, same methods)."""
    name = _dotted(call.func) or ""
    attr = name.rsplit(".", 1)[-1]
    module_attr = isinstance(call.func, ast.Attribute) and _dotted(call.func.value) == "random"
    imported_name = isinstance(call.func, ast.Name) and _imported_from(src, call.func.id, "random")
    if not module_attr and not imported_name:
        raise NoRewrite(f"{name}() is not a function of the random module (already safe, or a generator object "
                        "whose seed this rewrite cannot see)")
    if attr in ("seed", "Random", "getstate", "setstate"):
        raise NoRewrite(f"random.{attr}() makes or sets a reproducible generator; that is not a secret's source")
    new = _SECRETS.get(attr, f"secrets.SystemRandom().{attr}")
    start, end = src.span(call.func)
    return Change(name="random-to-secrets", edits=[Edit(start=start, end=end, new=new)], imports=("secrets",),
                  rationale=f"random.{attr}() comes from a predictable generator (Mersenne Twister) and its value "
                            f"becomes a secret; {new}() draws from the operating system's generator")


def _imported_from(src: Source, name: str, module: str) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module == module and any((a.asname or a.name) == name for a in n.names)
               for n in ast.walk(src.tree))


# -- weak hashes -> sha256 -----------------------------------------------------------------

_WEAK = ("md5", "sha1", "md4", "md2")


def strong_hash(src: Source, call: ast.Call, site: Site) -> Change:
    """``hashlib.md5(x)`` / ``hashlib.sha1(x)`` / ``hashlib.new("md5", x)`` -> sha256."""
    name = _dotted(call.func) or ""
    flag = _keyword(call, "usedforsecurity")
    if flag is not None and isinstance(flag.value, ast.Constant) and flag.value.value is False:
        raise NoRewrite("the call is already safe: it passes usedforsecurity=False")
    if isinstance(call.func, ast.Attribute) and _dotted(call.func.value) == "hashlib" and call.func.attr in _WEAK:
        start, end = src.span(call.func)
        edit = Edit(start=end - len(call.func.attr), end=end, new="sha256")
        weak = call.func.attr
    elif isinstance(call.func, ast.Name) and call.func.id in _WEAK and _imported_from(src, call.func.id, "hashlib"):
        start, end = src.span(call.func)
        edit = Edit(start=start, end=end, new="hashlib.sha256")
        weak = call.func.id
        return Change(name="strong-hash", edits=[edit], imports=("hashlib",), rationale=_hash_rationale(weak))
    elif name == "hashlib.new" and call.args and (_module_constant(src, call.args[0]) or "").lower().replace("-", "") in _WEAK:
        start, end = src.span(call.args[0])
        edit = Edit(start=start, end=end, new='"sha256"')
        weak = _module_constant(src, call.args[0]) or ""
    else:
        raise NoRewrite(f"no safe rewrite known for {name}(): not a hashlib constructor of a weak hash")
    return Change(name="strong-hash", edits=[edit], rationale=_hash_rationale(weak))


def _hash_rationale(weak: str) -> str:
    return (f"{weak.upper()} is broken for security uses (collisions can be made); SHA-256 is not. A digest stored "
            "earlier (a password table) no longer matches and needs a migration; where the hash protects nothing, "
            "usedforsecurity=False is the lighter change")


def _module_constant(src: Source, node: ast.expr) -> str | None:
    """A string constant, or a module-level name assigned a string constant once."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        values = [n.value for n in src.tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and n.targets[0].id == node.id]
        stores = [n for n in ast.walk(src.tree) if isinstance(n, ast.Name) and n.id == node.id
                  and not isinstance(n.ctx, ast.Load)]
        if len(values) == 1 == len(stores) and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str):
            return values[0].value
    return None


# -- XML parsing of outside input -> defusedxml ----------------------------------------

_DEFUSED = {"xml.etree.ElementTree": ("defusedxml.ElementTree", {"parse", "iterparse", "fromstring", "XML", "XMLParser"}),
            "xml.etree.cElementTree": ("defusedxml.ElementTree", {"parse", "iterparse", "fromstring", "XML", "XMLParser"}),
            "xml.dom.minidom": ("defusedxml.minidom", {"parse", "parseString"}),
            "xml.dom.pulldom": ("defusedxml.pulldom", {"parse", "parseString"}),
            "xml.sax": ("defusedxml.sax", {"parse", "parseString", "make_parser"}),
            "xml.dom.expatbuilder": ("defusedxml.expatbuilder", {"parse", "parseString"})}


def defused_xml(src: Source, call: ast.Call, site: Site) -> Change:
    """A standard-library XML parse of outside input -> the same function of defusedxml
    (entities and external references refused); lxml -> a parser with
    ``resolve_entities=False, no_network=True``."""
    api = site.api or ""
    module, _, function = api.rpartition(".")
    if module.startswith("lxml."):
        return _lxml(src, call, api)
    if module not in _DEFUSED or function not in _DEFUSED[module][1]:
        raise NoRewrite(f"no safe rewrite known for {api or _dotted(call.func)}(): defusedxml has no equivalent")
    safe = _DEFUSED[module][0]
    start, end = src.span(call.func)
    return Change(name="defusedxml", edits=[Edit(start=start, end=end, new=f"{safe}.{function}")], imports=(safe,),
                  rationale=f"{api}() expands entities of the document it parses, which comes from outside (a "
                            f"billion-laughs document exhausts memory); {safe}.{function}() refuses entity "
                            "declarations and external references (needs the defusedxml package)")


def _lxml(src: Source, call: ast.Call, api: str) -> Change:
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ("fromstring", "XML", "parse"):
        raise NoRewrite(f"no safe rewrite known for {api}()")
    if _keyword(call, "parser") is not None or len(call.args) > 1:
        raise NoRewrite("the call passes its own parser; its options are left to a person")
    module = src.segment(call.func.value)
    end = src.span(call.args[-1])[1] if call.args else src.span(call)[1] - 1
    new = f", parser={module}.XMLParser(resolve_entities=False, no_network=True)"
    return Change(name="lxml-no-entities", edits=[Edit(start=end, end=end, new=new)],
                  rationale=f"{api}() resolves entities by default (before lxml 5); a parser with "
                            "resolve_entities=False and no_network=True neither expands nor fetches them")


# -- open redirect -> a same-site check ----------------------------------------------------

SAME_SITE_HELPER = "_same_site_url"


def same_site_redirect(src: Source, call: ast.Call, site: Site) -> Change:
    """``redirect(x)`` -> ``redirect(_same_site_url(x))``, a helper added to the module that
    keeps a URL without a scheme or a host (a path on this site) and sends anything else to
    ``/``."""
    target = _argument(call, site.role or "argument 1")
    if isinstance(target, ast.Constant):
        raise NoRewrite("the value is constant: the redirect goes where the code says")
    start, end = src.span(target)
    edits = [Edit(start=start, end=start, new=f"{SAME_SITE_HELPER}("), Edit(start=end, end=end, new=")")]
    if not any(isinstance(n, ast.FunctionDef) and n.name == SAME_SITE_HELPER for n in src.tree.body):
        nl = src.newline
        tail = "" if src.text.endswith(("\n", "\r")) else nl
        helper = (f"{tail}{nl}{nl}def {SAME_SITE_HELPER}(url, fallback=\"/\"):{nl}"
                  f"    \"\"\"Returns url when it stays on this site (no scheme, no host), else fallback.\"\"\"{nl}"
                  f"    parts = urllib.parse.urlsplit(url){nl}"
                  f"    if parts.scheme or parts.netloc or url.startswith((\"//\", \"/\\\\\")):{nl}"
                  f"        return fallback{nl}"
                  f"    return url{nl}")
        edits.append(Edit(start=len(src.text), end=len(src.text), new=helper))
    return Change(name="same-site-redirect", edits=edits, imports=("urllib.parse",),
                  rationale="the redirect target came from outside, so a link could send users to any site; the "
                            f"check ({SAME_SITE_HELPER}) keeps paths on this site and sends anything with a scheme "
                            "or a host (or a protocol-relative //host) to /")


# -- path joined with outside input -> a containment check --------------------------------


def contained_path(src: Source, call: ast.Call, site: Site) -> Change:
    """``open(os.path.join(BASE, x))`` -> the real path of the join, checked to lie inside the
    real path of ``BASE`` before the statement that uses it (``PermissionError`` if not)."""
    arg = _argument(call, site.role or "argument 1")
    if isinstance(arg, ast.Constant):
        raise NoRewrite("the value is constant: the path is fixed in the code")
    if not (isinstance(arg, ast.Call) and _dotted(arg.func) in ("os.path.join", "path.join", "join", "posixpath.join")
            and len(arg.args) >= 2 and not arg.keywords):
        raise NoRewrite("the path is not joined onto a base folder here (os.path.join(BASE, ...)), so there is no "
                        "folder to contain it in")
    base = arg.args[0]
    if pieces(base) is not None and any(p.node is not None for p in pieces(base) or []):
        raise NoRewrite("the base folder itself is built from values; a containment check needs a fixed one")
    statement = _statement(src, call)
    if statement is None:
        raise NoRewrite("the call is not inside a statement a check can go before (a lambda, a comprehension, "
                        "a loop condition)")
    os_name = "os" if _dotted(arg.func) == "os.path.join" or "os" in src.imports() else None
    if os_name is None:
        raise NoRewrite("the file does not import os, which the check uses")
    name = _fresh(src, "safe_path")
    indent = src.indent_of(statement.lineno)
    nl = src.newline
    joined = src.segment(arg)
    base_text = src.segment(base)
    check = (f"{indent}{name} = os.path.realpath({joined}){nl}"
             f"{indent}if not {name}.startswith(os.path.realpath({base_text}) + os.sep):{nl}"
             f"{indent}    raise PermissionError({name}){nl}")
    line_start = src.line_start(statement.lineno)
    start, end = src.span(arg)
    return Change(name="contained-path", imports=("os",),
                  edits=[Edit(start=line_start, end=line_start, new=check), Edit(start=start, end=end, new=name)],
                  rationale="the path was joined with a name from outside, so ../ (or an absolute path) could reach "
                            "any file; the real path of the join is now checked to lie inside the real path of the "
                            "base folder before it is used")


def _statement(src: Source, node: ast.AST) -> ast.stmt | None:
    """The innermost simple statement (or ``with``/``if``, not ``elif``) on its own line that
    holds ``node``, where a statement may be inserted before it."""
    best: ast.stmt | None = None

    def visit(parent: ast.AST, stmt: ast.stmt | None) -> bool:
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
                    and _contains(child, node):
                return False
            here = child if isinstance(child, ast.stmt) else stmt
            if child is node:
                nonlocal best
                best = stmt
                return True
            if visit(child, here):
                return True
        return False

    visit(src.tree, None)
    if best is None or isinstance(best, (ast.While, ast.For, ast.AsyncFor)):
        return None
    line = src.lines[best.lineno - 1]
    if not line[:len(line) - len(line.lstrip())] + line.lstrip() or line.lstrip().startswith("elif"):
        return None
    if src.offset(best.lineno, best.col_offset) != src.line_start(best.lineno) + len(src.indent_of(best.lineno)):
        return None  # shares its line with another statement (a; b)
    return best


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


def _fresh(src: Source, stem: str) -> str:
    used = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)} | \
           {n.arg for n in ast.walk(src.tree) if isinstance(n, ast.arg)}
    name, k = stem, 2
    while name in used:
        name, k = f"{stem}_{k}", k + 1
    return name


# -- markup from outside -> escaping ----------------------------------------------------------


def escape_markup(src: Source, node: ast.AST, site: Site) -> Change:
    """Each value put into markup built from text (``"<p>" + x``, an f-string, ``%``,
    ``format``) -> ``html.escape(str(x))``; a response that is the value alone -> the
    value escaped."""
    target: ast.AST = node
    if isinstance(node, ast.Call) and site.role.startswith("argument"):
        target = _argument(node, site.role)
    if not isinstance(target, ast.expr):
        raise NoRewrite("the sink is not an expression")
    if isinstance(target, ast.Constant):
        raise NoRewrite("the value is constant: the markup is fixed in the code")
    if isinstance(target, ast.Call) and _dotted(target.func) in ("html.escape", "markupsafe.escape", "escape",
                                                                     "flask.escape", "django.utils.html.escape"):
        raise NoRewrite("the call is already safe: the value is escaped")
    parts = pieces(target)
    edits = []
    if parts is None:
        start, end = src.span(target)
        if isinstance(target, ast.Call) and _dotted(target.func) == "str":
            edits = [Edit(start=start, end=start, new="html.escape("), Edit(start=end, end=end, new=")")]
        elif isinstance(target, ast.Call):
            raise NoRewrite(f"the markup is what {_dotted(target.func) or 'a call'}() returns (a template or a "
                            "library makes it, and escaping its result would escape its own markup, or change "
                            "bytes); escape the value where it is put into markup")
        else:
            edits = [Edit(start=start, end=start, new="html.escape(str("), Edit(start=end, end=end, new="))")]
    else:
        values = [p.node for p in parts if p.node is not None]
        if not values:
            raise NoRewrite("the value is constant: the markup is fixed in the code")
        if isinstance(target, ast.JoinedStr) and any(isinstance(v, ast.JoinedStr) for v in values):
            raise NoRewrite("a nested f-string; escaping its parts is left to a person")
        concat = isinstance(target, ast.BinOp) and isinstance(target.op, ast.Add)
        for value in values:  # a value added to text is text already; one formatted in may not be
            start, end = src.span(value)
            edits += [Edit(start=start, end=start, new="html.escape(" if concat else "html.escape(str("),
                      Edit(start=end, end=end, new=")" if concat else "))")]
    return Change(name="escape-markup", edits=edits, imports=("html",),
                  rationale="outside data was put into an HTML page as it is, so it could add markup and scripts; "
                            "html.escape() turns its <, >, & and quotes into text")


# -- cookies -> secure=True, httponly=True ------------------------------------------------


def cookie_flags(src: Source, call: ast.Call, site: Site) -> Change:
    """``set_cookie(k, v)`` -> ``set_cookie(k, v, secure=True, httponly=True)``: the flags
    missing or false set to true."""
    if any(k.arg is None for k in call.keywords):
        raise NoRewrite("the call passes **keywords, which may set the flags; left to a person")
    edits = []
    for flag in ("secure", "httponly"):
        kw = _keyword(call, flag)
        if kw is None:
            continue
        if _true(kw.value):
            continue
        if not isinstance(kw.value, ast.Constant):
            raise NoRewrite(f"{flag}= is set from a value ({ast.unparse(kw.value)}); it may be meant for local "
                            "development, so it is left to a person")
        start, end = src.span(kw.value)
        edits.append(Edit(start=start, end=end, new="True"))
    missing = [f for f in ("secure", "httponly") if _keyword(call, f) is None]
    if missing:
        items = [*call.args, *call.keywords]
        if not items:
            raise NoRewrite("set_cookie() has no arguments")
        end = max(src.span(i)[1] for i in items)
        edits.append(Edit(start=end, end=end, new="".join(f", {f}=True" for f in missing)))
    if not edits:
        raise NoRewrite("the call is already safe: it passes secure=True and httponly=True")
    return Change(name="cookie-flags", edits=edits,
                  rationale="the cookie went over plain HTTP and was readable by page scripts; secure=True sends it "
                            "over HTTPS only and httponly=True hides it from scripts (a site served over plain HTTP "
                            "must move to HTTPS for the cookie to be sent)")


REWRITES = {"deserialization": yaml_safe_load, "command": shell_to_argv, "sql": sql_parameters,
            "random": random_to_secrets, "weak-hash": strong_hash, "xml-bomb": defused_xml, "xxe": defused_xml,
            "redirect": same_site_redirect, "path": contained_path, "xss": escape_markup,
            "cookie-secure": cookie_flags, "cookie-httponly": cookie_flags}
"""Weakness kind -> its rewrite. Kinds not here have no safe rewrite known."""
