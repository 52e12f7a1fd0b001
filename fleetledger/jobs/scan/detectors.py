"""fleetledger's own detectors: weaknesses bandit 1.9 misses, found on the tree detect parsed.

Rules:
    * ``FL001 sql_built_from_strings`` (CWE-89): a SQL-running call (``.execute``,
      ``.executemany``, ``.executescript``, ``.mogrify``, ``.raw``, ``.extra``,
      ``sqlalchemy.text``) whose query is built at run time, by concatenation, ``%``,
      ``.format()`` or an f-string with a non-constant part, and whose constant parts hold SQL
      keywords (``.extra`` fragments need none); also through a local variable assigned such
      an expression earlier in the same scope. Bandit's B608 misses chains such as
      ``"SELECT a " + "FROM " + v`` and statements its pattern does not know (``DROP``...).
      The candidate is placed where the query text is built, as B608 places its own.
    * ``FL002 tls_verification_disabled`` (CWE-295): ``verify=False`` on requests' and httpx's
      module functions (bandit's B501 misses ``requests.request``), on methods of a
      ``requests.Session()``/``httpx.Client()`` bound in the same scope or of an attribute
      named ``session``; ``ssl._create_unverified_context()``; an
      ``ssl.create_default_context()`` whose ``check_hostname`` is then set to ``False`` or
      ``verify_mode`` to ``ssl.CERT_NONE`` (placed on the first such assignment);
      ``ssl._create_default_https_context = ssl._create_unverified_context`` (the process-wide
      default); and ``S.verify = False`` on a session made in the same scope.

Every walk is iterative (an explicit stack), so a tree of any depth is walked without
touching the recursion limit. A rule that raises costs only its own hits: ``detect`` reports
it as one line and runs the other rules.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

DETECTOR = "fleetledger"

_Node = ast.expr | ast.stmt
_Flag = tuple[_Node, tuple[_Node, ...], str]  # flagged node, weakness span, message


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One fleetledger detector rule.

    Attributes:
        rule_id: ``"FL001"``, ``"FL002"``...
        name: The rule's name, e.g. ``"sql_built_from_strings"``.
        cwe: The CWE number every hit of the rule carries.
        severity: ``"LOW"``, ``"MEDIUM"`` or ``"HIGH"``, on bandit's scale.
        confidence: ``"LOW"``, ``"MEDIUM"`` or ``"HIGH"``, on bandit's scale.
        find: Yields ``(flagged node, span, message)`` per weakness, given the module's index
            (``_Index.of``, built once for every rule).
    """

    rule_id: str
    name: str
    cwe: int
    severity: str
    confidence: str
    find: Callable[[_Index], Iterator[_Flag]]


@dataclass(frozen=True, kw_only=True)
class Hit:
    """A weakness one rule found.

    Attributes:
        rule: The rule that found it.
        node: The flagged node; the candidate is placed at its start.
        span: The nodes the weakness covers (the sink call, the query expression...); a bandit
            issue of the same CWE inside one of them reports the same weakness.
        message: One line for the candidate.
    """

    rule: Rule
    node: _Node
    span: tuple[_Node, ...]
    message: str


def detect(tree: ast.Module) -> tuple[list[Hit], list[str]]:
    """Runs every rule on a module.

    Args:
        tree: The parsed module.

    Returns:
        The hits, by rule and then by position, and one line per rule that raised, e.g. ``"FL001
        sql_built_from_strings raised ValueError: bad"`` (that rule's hits are dropped, the
        other rules still report).
    """
    hits: list[Hit] = []
    errors: list[str] = []
    index = _Index.of(tree)
    for rule in RULES:
        try:
            flags = sorted(rule.find(index), key=lambda flag: _start(flag[0]))
        except Exception as error:  # a rule's bug on odd input: report it, keep the others
            errors.append(f"{rule.rule_id} {rule.name} raised {type(error).__name__}: {error}")
            continue
        hits.extend(Hit(rule=rule, node=node, span=span, message=message) for node, span, message in flags)
    return hits, errors


def unflagged(hits: Iterable[Hit], flagged: Iterable[tuple[int, int, int | None]]) -> list[Hit]:
    """Drops the hits another detector already reports.

    Args:
        hits: Hits from ``detect``.
        flagged: Another detector's issues as ``(line, col_offset, cwe)``, in the parser's
            line numbers and UTF-8 byte columns.

    Returns:
        The hits with no issue of the same CWE starting inside their span, in the given order.
    """
    by_cwe: dict[int | None, list[tuple[int, int]]] = {}
    for line, col, cwe in flagged:
        by_cwe.setdefault(cwe, []).append((line, col))
    for positions in by_cwe.values():
        positions.sort()
    return [hit for hit in hits if not any(_marks(by_cwe.get(hit.rule.cwe, []), node) for node in hit.span)]


def _marks(positions: list[tuple[int, int]], node: _Node) -> bool:
    """Tells whether a sorted list of positions holds one inside the node's span."""
    first = bisect.bisect_left(positions, _start(node))
    return first < len(positions) and positions[first] <= (node.end_lineno or node.lineno, node.end_col_offset or 0)


# --- the module's scopes and imports -----------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True, kw_only=True)
class _Index:
    """What the rules look up: import aliases, and the statements and expressions of each scope.

    Attributes:
        imports: Local name -> the dotted name it stands for (``{"sa": "sqlalchemy"}``).
        scopes: Per scope (module, class, function, lambda), its own nodes in source order;
            a nested scope's nodes are in the nested scope's entry.
    """

    imports: dict[str, str]
    scopes: tuple[tuple[_Node, ...], ...]

    @classmethod
    def of(cls, tree: ast.Module) -> _Index:
        """Indexes a module in one iterative walk."""
        imports: dict[str, str] = {}
        scopes: list[list[_Node]] = [[]]
        stack: list[tuple[ast.AST, int]] = [(tree, 0)]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, ast.Import):
                for alias in node.names:
                    head = alias.name.split(".")[0]
                    imports[alias.asname or head] = alias.name if alias.asname else head
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            inner = scope
            if isinstance(node, _SCOPES):
                scopes.append([])
                inner = len(scopes) - 1
            for field in node._fields:
                value = getattr(node, field, None)
                child_scope = inner if field == "body" else scope
                if isinstance(value, ast.AST):
                    if isinstance(value, (ast.expr, ast.stmt)):
                        scopes[child_scope].append(value)
                    stack.append((value, child_scope))
                elif isinstance(value, list):
                    for child in value:
                        if isinstance(child, ast.AST):
                            if isinstance(child, (ast.expr, ast.stmt)):
                                scopes[child_scope].append(child)
                            stack.append((child, child_scope))
        return cls(imports=imports, scopes=tuple(tuple(sorted(nodes, key=_start)) for nodes in scopes))

    def qualname(self, expr: ast.AST) -> str | None:
        """Returns the dotted name of a name or attribute chain, import aliases resolved."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        parts.append(self.imports.get(expr.id, expr.id))
        return ".".join(reversed(parts))


def _start(node: _Node) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _written(func: ast.expr) -> str:
    """The called name as written (``self.db.execute``), or its last part after a call."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts)) or "the call"


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _assigned(nodes: Iterable[_Node]) -> Iterator[tuple[str, ast.expr, ast.stmt]]:
    """Yields ``(name, value, statement)`` for each plain name a scope binds by assignment."""
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value, node
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and node.value:
            yield node.target.id, node.value, node


# --- FL001 sql_built_from_strings ---------------------------------------------------------------

_SQL_METHODS = frozenset({"execute", "executemany", "executescript", "mogrify", "raw"})
_SQLALCHEMY_TEXT = frozenset({"sqlalchemy.text", "sqlalchemy.sql.text", "sqlalchemy.sql.expression.text"})
_QUERY_KEYWORDS = ("sql", "query", "statement", "operation", "stmt", "raw_query", "text")
_EXTRA_FRAGMENTS = ("select", "where", "tables", "order_by")  # QuerySet.extra's SQL arguments
_SQL_WORDS = re.compile(
    r"\b(?:select|insert|update|delete|from|where|into|values|set|order\s+by|group\s+by|create"
    r"|drop|alter|truncate|join|union|having|limit)\b",
    re.IGNORECASE,
)


def _find_sql(index: _Index) -> Iterator[_Flag]:
    flagged: set[int] = set()
    for nodes in index.scopes:
        bindings: dict[str, list[tuple[ast.expr, ast.stmt]]] = {}
        for name, value, statement in _assigned(nodes):
            bindings.setdefault(name, []).append((value, statement))
        for call in nodes:
            if not isinstance(call, ast.Call):
                continue
            sink = _sql_sink(call, index)
            if sink is None:
                continue
            queries, fragments = sink
            for query in queries:
                flag = _built_query(call, query, fragments, bindings)
                if flag is not None and id(flag[0]) not in flagged:
                    flagged.add(id(flag[0]))
                    yield flag


def _sql_sink(call: ast.Call, index: _Index) -> tuple[list[ast.expr], bool] | None:
    """Returns the SQL arguments of a SQL-running call, and whether they are bare fragments."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "extra":
        given = [_keyword(call, name) for name in _EXTRA_FRAGMENTS] + list(call.args[:2])
        parts: list[ast.expr] = []
        for value in given:
            if isinstance(value, (ast.List, ast.Tuple)):
                parts.extend(value.elts)
            elif isinstance(value, ast.Dict):
                parts.extend(value.values)
            elif value is not None:
                parts.append(value)
        return parts, True
    if not (isinstance(func, ast.Attribute) and func.attr in _SQL_METHODS or index.qualname(func) in _SQLALCHEMY_TEXT):
        return None
    if call.args and not isinstance(call.args[0], ast.Starred):
        return [call.args[0]], False
    return [value for value in (_keyword(call, name) for name in _QUERY_KEYWORDS) if value is not None][:1], False


def _built_query(
    call: ast.Call, query: ast.expr, fragments: bool, bindings: dict[str, list[tuple[ast.expr, ast.stmt]]]
) -> _Flag | None:
    """Flags a query built at run time, in the call or in earlier assignments of its variable."""
    sink = f"{_written(call.func)}()"
    how, texts, varies = _pieces(query)
    if how and varies and (fragments or _SQL_WORDS.search(" ".join(texts))):
        return query, (call, query), (
            f"SQL text built by {how} with a run-time value is run by {sink}; pass values as query parameters."
        )
    if not isinstance(query, ast.Name):
        return None
    values = [value for value, statement in bindings.get(query.id, []) if _start(statement) < _start(call)]
    built = [(value, _pieces(value, itself=query.id)) for value in values]
    words = " ".join(text for _, (_, texts, _) in built for text in texts)
    dynamic = [(value, how) for value, (how, _, varies) in built if how and varies]
    if not dynamic or not (fragments or _SQL_WORDS.search(words)):
        return None
    value, how = dynamic[0]
    return value, (call, value), (
        f"SQL text built by {how} with a run-time value is run by {sink} at line {call.lineno} "
        f"(as {query.id!r}); pass values as query parameters."
    )


def _pieces(expr: ast.expr, itself: str = "") -> tuple[str, list[str], bool]:
    """Splits a string-building expression into its parts.

    ``itself`` names the variable being built (``q = q + ...``), whose earlier value is judged
    by its own assignments and so is not a run-time part here.

    Returns:
        How it builds text (``"concatenation"``, ``"% formatting"``, ``"str.format()"``, ``"an
        f-string"``, the first met; ``""`` when it builds none), its constant strings in
        source order, and whether any part is not a constant.
    """
    how: list[str] = []
    texts: list[str] = []
    varies = False
    stack: list[ast.expr] = [expr]
    while stack:
        node = stack.pop()
        children: list[ast.expr] = []
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                texts.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            how.append("an f-string")
            children = node.values
        elif isinstance(node, ast.FormattedValue):
            children = [node.value]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            how.append("concatenation")
            children = [node.left, node.right]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            how.append("% formatting")
            children = [node.left, *_format_arguments(node.right)]
        elif isinstance(node, ast.IfExp):
            children = [node.body, node.orelse]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            how.append("str.format()")
            children = [node.func.value, *node.args, *(k.value for k in node.keywords)]
        elif not (isinstance(node, ast.Name) and node.id == itself):
            varies = True
        stack.extend(reversed(children))
    return (how[0] if how else ""), texts, varies


def _format_arguments(values: ast.expr) -> list[ast.expr]:
    """The values ``text % values`` formats: a tuple's items, a dict's values, else ``values``."""
    if isinstance(values, ast.Tuple):
        return values.elts
    if isinstance(values, ast.Dict):
        return values.values
    return [values]


# --- FL002 tls_verification_disabled ------------------------------------------------------------

_VERBS = frozenset({"get", "options", "head", "post", "put", "patch", "delete", "request"})
_MODULE_CALLS = {"requests": _VERBS, "httpx": _VERBS | {"stream", "Client", "AsyncClient"}}
_CLIENT_METHODS = _VERBS | {"stream"}
_CLIENTS = frozenset({
    "requests.Session", "requests.session", "requests.sessions.Session", "httpx.Client", "httpx.AsyncClient",
})
_CONTEXT_FACTORY = "ssl.create_default_context"
_UNVERIFIED = "ssl._create_unverified_context"


def _find_tls(index: _Index) -> Iterator[_Flag]:
    for nodes in index.scopes:
        made = list(_clients(nodes, index))
        clients = {name for name, _ in made}
        # requests reads a session's verify attribute at each request; httpx only its constructor's.
        sessions = {name for name, factory in made if factory.startswith("requests.")}
        # Names bound to the unverified factory (``_ctx = ssl._create_unverified_context``, the
        # idiom guarded by ``try``/``except AttributeError``/``else``).
        factories = {name for name, value, _ in _assigned(nodes) if index.qualname(value) == _UNVERIFIED}
        contexts: dict[str, ast.stmt] = {}
        for name, value, statement in _assigned(nodes):
            if isinstance(value, ast.Call) and index.qualname(value.func) == _CONTEXT_FACTORY:
                contexts.setdefault(name, statement)
        disabled: set[str] = set()
        for node in nodes:
            if isinstance(node, ast.Call):
                flag = _unverified_call(node, index, clients)
                if flag is not None:
                    yield flag
            elif isinstance(node, ast.Assign):
                flag = _unverified_store(node, index, sessions, factories)
                if flag is not None:
                    yield flag
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                name = _context_switched_off(node, index)
                if name in contexts and name not in disabled and _start(contexts[name]) < _start(node):
                    disabled.add(name)
                    yield node, (node,), (
                        f"The SSL context {name!r} from ssl.create_default_context() (line {contexts[name].lineno}) "
                        "stops checking the server's certificate or host name."
                    )


def _clients(nodes: Iterable[_Node], index: _Index) -> Iterator[tuple[str, str]]:
    """Yields ``(name, factory)`` for each name (``session``, or an attribute's text,
    ``self.session``) a scope binds to a new HTTP session or client (assigned or ``with ...
    as``), with the qualified name of what made it."""
    for name, value, _ in _assigned(nodes):
        if isinstance(value, ast.Call) and index.qualname(value.func) in _CLIENTS:
            yield name, index.qualname(value.func) or ""
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and index.qualname(node.value.func) in _CLIENTS:
            yield from ((ast.unparse(t), index.qualname(node.value.func) or "") for t in node.targets
                        if isinstance(t, ast.Attribute))
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                made, name = item.context_expr, item.optional_vars
                if isinstance(name, ast.Name) and isinstance(made, ast.Call) and index.qualname(made.func) in _CLIENTS:
                    yield name.id, index.qualname(made.func) or ""


def _unverified_call(call: ast.Call, index: _Index, clients: set[str]) -> _Flag | None:
    name = index.qualname(call.func)
    if name == _UNVERIFIED:
        return call, (call,), "ssl._create_unverified_context() makes an SSL context that accepts any certificate."
    verify = _keyword(call, "verify")
    if not (isinstance(verify, ast.Constant) and verify.value is False):
        return None
    module, _, function = (name or "").rpartition(".")
    if function in _MODULE_CALLS.get(module, ()):
        return call, (call,), f"Call to {name}() with verify=False turns off TLS certificate checks."
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in _CLIENT_METHODS):
        return None
    # ``verify=False`` on an HTTP verb is requests' and httpx's switch whatever the receiver is
    # named (a session made here, one passed in, one kept on an attribute): the library's API
    # names decide, never the code's own names.
    made_here = isinstance(func.value, ast.Name) and func.value.id in clients
    where = "an HTTP session or client" if made_here else "an HTTP client"
    return call, (call,), f"{_written(func)}() on {where} with verify=False turns off TLS certificate checks."


def _unverified_store(assign: ast.Assign, index: _Index, sessions: set[str], factories: set[str]) -> _Flag | None:
    """``ssl._create_default_https_context = ssl._create_unverified_context`` (also through a
    name bound to it: every later ``urlopen``/``http.client`` connection of the process accepts
    any certificate), or ``S.verify = False`` on a requests session ``S`` made in the scope
    (each of its requests); any target of a chained assignment counts."""
    value = assign.value
    for target in assign.targets:
        if not isinstance(target, ast.Attribute):
            continue
        if index.qualname(target) == "ssl._create_default_https_context" and (
                index.qualname(value) == _UNVERIFIED or isinstance(value, ast.Name) and value.id in factories):
            return assign, (assign,), ("Setting ssl._create_default_https_context to ssl._create_unverified_context "
                                       "turns off certificate checks for every HTTPS connection the process makes by "
                                       "default.")
        if (target.attr == "verify" and ast.unparse(target.value) in sessions
                and isinstance(value, ast.Constant) and value.value is False):
            return assign, (assign,), (f"{_written(target)} = False turns off TLS certificate checks for every request "
                                       "of the session.")
    return None


def _context_switched_off(assign: ast.Assign, index: _Index) -> str | None:
    """Returns the name ``X`` of ``X.check_hostname = False`` or ``X.verify_mode = ssl.CERT_NONE``."""
    target, value = assign.targets[0], assign.value
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return None
    if (
        target.attr == "check_hostname" and isinstance(value, ast.Constant) and value.value is False
        or target.attr == "verify_mode" and index.qualname(value) == "ssl.CERT_NONE"
    ):
        return target.value.id
    return None


RULES: tuple[Rule, ...] = (
    # Rated as bandit rates the same weakness: B608 in an execute call, B501.
    Rule(rule_id="FL001", name="sql_built_from_strings", cwe=89, severity="MEDIUM", confidence="MEDIUM",
         find=_find_sql),
    Rule(rule_id="FL002", name="tls_verification_disabled", cwe=295, severity="HIGH", confidence="HIGH",
         find=_find_tls),
)
"""Every rule, in the order ``detect`` runs them."""
