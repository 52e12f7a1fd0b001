"""One canonical form of a Python syntax tree, shared by the host and the CPython 3.14 oracle.

The same file runs on the host (Python 3.11+) and inside Pyodide (CPython 3.14 compiled to
WebAssembly, see ``dump314.mjs``), so both sides of every comparison in ``tests/test_parser.py``
and ``bench/parser_bench.py`` are serialised by the same code. It must stay plain Python with
no imports beyond the standard library.

A tree becomes a flat list of records, one per node in pre-order::

    [path, type, fields, positions]

``path`` names the node from the module down (``body[2].value.args[0]``), ``type`` is the class
name, ``fields`` maps each field whose value is not a node, a list of nodes or a default
(``None`` or ``[]``) to a tagged JSON value, and ``positions`` is ``[lineno, col_offset,
end_lineno, end_col_offset]`` (``null`` for nodes that have none). Operators and contexts
(``Add``, ``Load``...) are written as their class name in the parent's fields. A ``None``
inside a list of nodes (``Dict.keys`` for ``**d``) is a record ``[path, null, {}, null]``.
Comparing two lists record by record names the first node that differs.

Normalisations (the whole list; each is a difference of the interpreter, not of the source):

* ``type_params`` of ``FunctionDef``, ``AsyncFunctionDef`` and ``ClassDef`` is read with
  ``getattr`` when the class has no such field (before 3.12, where the tree-sitter converter
  attaches it as a plain attribute).
* ``fstring_parts=False`` (only for comparisons with a host older than 3.12): before 3.12,
  the parts of an f-string (the ``Constant`` and ``FormattedValue`` nodes in
  ``JoinedStr.values`` and a format spec's ``JoinedStr``) carry the position of the whole
  f-string expression, and a tuple right inside the braces (``f"{a, b}"``) includes them:
  the positions of those parts and tuples are dropped from both sides (the other
  expressions inside the braces keep theirs).

Walks are iterative, so a tree as deep as the interpreter accepts is serialised.
"""

import ast
import io
import json
import tokenize

_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_TYPE_PARAM_OWNERS = ("FunctionDef", "AsyncFunctionDef", "ClassDef")


def read_source(data):
    """Decodes a Python file's bytes as CPython does (BOM, coding cookie) and drops the BOM.

    Args:
        data: The file's bytes.

    Returns:
        The text, without a leading BOM.

    Raises:
        SyntaxError: the coding cookie names an unknown encoding.
        UnicodeDecodeError: the bytes are not in the declared encoding.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def _scalar(value):
    """Returns a tagged, JSON-able form of a field value that is not a node."""
    if value is None or value is Ellipsis or isinstance(value, bool):
        return [repr(value)]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, bytes):
        return ["bytes", value.hex()]
    if isinstance(value, int):
        return ["int", hex(value)]
    if isinstance(value, (float, complex)):
        return [type(value).__name__, repr(value)]
    if isinstance(value, ast.AST):
        return [type(value).__name__]
    if isinstance(value, (list, tuple)):
        return ["list", [_scalar(item) for item in value]]
    return ["?", type(value).__name__, repr(value)]


def _is_record_node(value):
    """True for nodes that get their own record (not operators or contexts)."""
    return isinstance(value, ast.AST) and bool(value._fields or value._attributes)


def canonical(tree, fstring_parts=True):
    """Returns the canonical record list of ``tree``.

    Args:
        tree: A syntax tree (any ``ast.AST``).
        fstring_parts: False to drop the positions of f-string parts (for a host older than
            3.12; see the module docstring).

    Returns:
        The records, in pre-order.
    """
    records = []
    stack = [("", tree, False)]
    while stack:
        path, node, hide = stack.pop()
        if node is None:
            records.append([path, None, {}, None])
            continue
        kind = type(node).__name__
        fields = {}
        children = []
        names = list(node._fields)
        if kind in _TYPE_PARAM_OWNERS and "type_params" not in names:
            names.append("type_params")
        for name in names:
            value = getattr(node, name, None)
            if value is None or (isinstance(value, list) and not value):
                continue
            if _is_record_node(value):
                children.append((name, value))
            elif isinstance(value, list) and any(_is_record_node(item) for item in value):
                for index, item in enumerate(value):
                    children.append((f"{name}[{index}]", item))
            else:
                fields[name] = _scalar(value)
        if hide or not node._attributes:
            positions = None
        else:
            positions = [getattr(node, name, None) for name in _POSITIONS]
        records.append([path, kind, fields, positions])
        hide_parts = not fstring_parts and kind in ("JoinedStr", "FormattedValue")
        prefix = path + "." if path else ""
        for name, child in reversed(children):
            part = hide_parts and (kind == "JoinedStr" or name == "format_spec"
                                   or (name == "value" and type(child).__name__ == "Tuple"))
            stack.append((prefix + name, child, part))
    return records


def dumps(tree, fstring_parts=True):
    """Returns the canonical JSON text of ``tree`` (one line, ASCII only).

    Args:
        tree: A syntax tree.
        fstring_parts: As for ``canonical``.

    Returns:
        The JSON text.
    """
    return json.dumps(canonical(tree, fstring_parts), ensure_ascii=True, separators=(",", ":"))


def first_difference(left, right):
    """Names the first record where two canonical lists differ.

    Args:
        left: Records from ``canonical`` (or parsed from ``dumps``).
        right: The records to compare with.

    Returns:
        None if equal, else a one-line description: the node's path and both records.
    """
    for a, b in zip(left, right):
        if a != b:
            return f"at {a[0] or b[0] or '<module>'}: {json.dumps(a)} != {json.dumps(b)}"
    if len(left) != len(right):
        shorter, longer = (left, right) if len(left) < len(right) else (right, left)
        extra = longer[len(shorter)]
        return f"one tree has more nodes, first at {extra[0]}: {json.dumps(extra)}"
    return None


def dump_source(data):
    """Parses a file's bytes with this interpreter's ``ast.parse`` and returns a JSON result.

    Args:
        data: The file's bytes.

    Returns:
        JSON text: ``{"ok": true, "tree": [...]}`` or ``{"ok": false, "error": "...",
        "line": N}`` when the file does not parse (``line`` is null when unknown).
    """
    try:
        tree = ast.parse(read_source(data))
    except SyntaxError as error:
        return json.dumps({"ok": False, "error": f"SyntaxError: {error.msg}", "line": error.lineno})
    except (RecursionError, MemoryError, ValueError, UnicodeDecodeError) as error:
        return json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}", "line": None})
    return json.dumps({"ok": True, "tree": canonical(tree)}, ensure_ascii=True, separators=(",", ":"))
