"""Python source of any version up to 3.14 -> the running interpreter's ``ast`` tree, via tree-sitter.

The scanner runs on Python 3.11 and later, whose own ``ast.parse`` refuses newer syntax:
PEP 701 f-strings (nested same quotes, backslashes and comments inside the braces), PEP 695
type parameters and ``type X = ...``, PEP 696 type parameter defaults, PEP 758 ``except A,
B:``, PEP 750 t-strings. ``convert`` parses with tree-sitter's Python grammar instead and
builds the tree CPython 3.14's ``ast.parse`` would give, with the same positions (``lineno``
1-based; ``col_offset`` and ``end_col_offset`` in UTF-8 bytes), so the analysis works on one
kind of tree whatever produced it. ``fleetledger.analysis.parser`` decides which parser runs.

Node classes the host lacks (Python 3.11 has no ``TypeAlias``, ``TypeVar``, ``ParamSpec``,
``TypeVarTuple``, ``TemplateStr`` or ``Interpolation``) are defined here with CPython 3.14's
``_fields`` and ``_attributes``, so ``ast.walk``, ``ast.iter_child_nodes``, ``ast.dump`` and
``NodeVisitor.visit_TypeAlias`` work on them; on a host that has them they are the host's
classes. Test with ``isinstance(node, tsconvert.TemplateStr)`` to be right on every host.
Where the host's ``FunctionDef``, ``AsyncFunctionDef`` and ``ClassDef`` have no
``type_params`` field (3.11), the type parameters are attached as a plain attribute
``type_params`` (a list, empty when there are none) that ``ast.walk`` does not visit; where
the host's ``TypeVar`` has no ``default_value`` field (3.12), likewise. Such a tree is for
analysis: ``compile()`` refuses the classes defined here.

How t-strings appear: ``TemplateStr(values=[Constant | Interpolation, ...])``, each
``Interpolation(value, str, conversion, format_spec)`` with ``str`` the expression's source
text; nested fields of a format spec are ``FormattedValue`` nodes in a ``JoinedStr``, as in
CPython. How type parameters appear: ``TypeVar(name, bound, default_value)`` (a tuple of
constraints is a ``Tuple`` bound), ``TypeVarTuple(name, default_value)`` for ``*Ts``,
``ParamSpec(name, default_value)`` for ``**P``; ``type X[T] = ...`` is ``TypeAlias(name=Name
(Store), type_params, value)``.

tree-sitter-python 0.25 misreads a few constructs; ``_convert`` repairs those it can by
re-parsing (PEP 696 defaults, ``f"{x:=^10}"``, ``type(x).a = 1``, ``print >> f, x``), and
``_binary`` rebuilds operator runs because the grammar ranks ``^`` above ``&``. Known gaps, all
refused with ``TreeSitterSyntaxError`` rather than converted wrongly (found by running
``bench/parser_bench.py`` on the host's and CPython 3.14's standard libraries and the host's
site-packages):

* a line break right after the dot of an attribute inside brackets (``(a.\\n b)``): one file
  of CPython's test suite;
* ``from __future__ import *`` (which ``ast.parse`` accepts and only the compiler refuses);
* a format spec starting with ``=`` that is followed by a conversion or a nested field and
  that tree-sitter reads as a walrus without error (``f"{x:=10!r}"``).

Indentation is checked as tree-sitter measures it (byte columns within a block; a tab counts
8), so files CPython refuses with ``TabError`` are refused too, by a different message. CPython
rejects much that tree-sitter accepts (assignment to a literal, ``return`` outside a function,
...): only the checks listed in ``_Converter`` are made, so some invalid files convert.

Speed: about 2.5 to 3 times the host's ``ast.parse`` in total on a standard library (the
tree-sitter parse itself is about 0.8 times; see ``bench/parser_bench.py``).

Every walk is iterative along the chains that real code makes long (binary operators, boolean
operators, attribute/call/subscript chains, unary operators, conditional expressions,
assignment chains, ``elif``); the remaining recursion follows brackets and blocks, which
CPython bounds (200 nested brackets, 100 levels of indentation). Running out of stack anyway
is reported as ``TreeSitterSyntaxError("... nesting too deep")``.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import tree_sitter_python
from tree_sitter import Language, Node, Parser

__all__ = [
    "Interpolation",
    "ParamSpec",
    "TemplateStr",
    "TreeSitterSyntaxError",
    "TypeAlias",
    "TypeVar",
    "TypeVarTuple",
    "convert",
    "type_param",
]

_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


class TreeSitterSyntaxError(ValueError):
    """The text is not Python that tree-sitter and this converter understand.

    The message is ``syntax error at line N: why``; ``lineno`` is N (None when unknown). Any
    failure inside the conversion is reported as this error too, never as another exception.
    """

    def __init__(self, message: str, *, lineno: int | None = None) -> None:
        super().__init__(message)
        self.lineno = lineno

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (str(self), self.lineno))


def _rebuild_error(message: str, lineno: int | None) -> TreeSitterSyntaxError:
    return TreeSitterSyntaxError(message, lineno=lineno)


def _late_class(name: str, base: type, fields: tuple[str, ...], doc: str) -> Any:
    """The host's ``ast.<name>``, or a stand-in with CPython 3.14's fields and attributes."""
    host = getattr(ast, name, None)
    if host is not None:
        return host
    return type(name, (base,), {"_fields": fields, "_attributes": _POSITIONS, "__doc__": doc,
                                "__module__": __name__, "__match_args__": fields})


type_param: Any = _late_class("type_param", ast.AST, (), "A type parameter (Python 3.12's ast.type_param).")
TypeVar: Any = _late_class("TypeVar", type_param, ("name", "bound", "default_value"), "``T``, ``T: bound``, ``T = default``.")
ParamSpec: Any = _late_class("ParamSpec", type_param, ("name", "default_value"), "``**P`` in type parameters.")
TypeVarTuple: Any = _late_class("TypeVarTuple", type_param, ("name", "default_value"), "``*Ts`` in type parameters.")
TypeAlias: Any = _late_class("TypeAlias", ast.stmt, ("name", "type_params", "value"), "``type X[T] = value`` (PEP 695).")
TemplateStr: Any = _late_class("TemplateStr", ast.expr, ("values",), "A t-string (PEP 750): Constant and Interpolation parts.")
Interpolation: Any = _late_class("Interpolation", ast.expr, ("value", "str", "conversion", "format_spec"),
                                 "A replacement field of a t-string; ``str`` is the expression's source text.")

_HAS_TYPE_PARAMS = "type_params" in ast.FunctionDef._fields

_LANGUAGE = Language(tree_sitter_python.language())
_new = ast.AST.__new__
_LOAD, _STORE, _DEL = ast.Load(), ast.Store(), ast.Del()

_BINOPS = {
    "+": ast.Add(), "-": ast.Sub(), "*": ast.Mult(), "@": ast.MatMult(), "/": ast.Div(),
    "%": ast.Mod(), "//": ast.FloorDiv(), "**": ast.Pow(), "|": ast.BitOr(), "&": ast.BitAnd(),
    "^": ast.BitXor(), "<<": ast.LShift(), ">>": ast.RShift(),
}
_PRECEDENCE = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "@": 6, "/": 6, "//": 6,
               "%": 6, "**": 7}
_AUGOPS = {op + "=": value for op, value in _BINOPS.items()}
_UNARYOPS = {"+": ast.UAdd(), "-": ast.USub(), "~": ast.Invert(), "not": ast.Not()}
_CMPOPS = {
    "<": ast.Lt(), "<=": ast.LtE(), "==": ast.Eq(), "!=": ast.NotEq(), ">=": ast.GtE(), ">": ast.Gt(),
    "in": ast.In(), "not in": ast.NotIn(), "is": ast.Is(), "is not": ast.IsNot(),
}
_STRING_PREFIXES = frozenset(["", "r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"])
_POSTFIX = frozenset(["attribute", "call", "subscript"])
_UNARY = frozenset(["unary_operator", "not_operator"])
_RUNS = frozenset(["binary_operator", "union_type"])

# Escape sequences of str and bytes literals, as CPython's decoders read them.
_ESCAPE = re.compile(r"\\(\n|[\\'\"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2}|x|u[0-9a-fA-F]{4}|u|U[0-9a-fA-F]{8}|U"
                     r"|N\{[^}]*\}|N|.)", re.S)
_FSTRING_ESCAPE = re.compile(_ESCAPE.pattern + r"|\{\{|\}\}", re.S)
_SIMPLE_ESCAPES = {"\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
                   "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def convert(text: str) -> ast.Module:
    """Parses ``text`` with tree-sitter and returns CPython 3.14's tree as host ``ast`` nodes.

    Line ends ``\\r\\n`` and ``\\r`` count as ``\\n`` (as CPython's tokenizer counts them) and a
    leading BOM is ignored, so positions are CPython's for any line ending.

    Args:
        text: The decoded source of a Python file. Read-only; thread-safe (a parser per call).

    Returns:
        The module, with CPython 3.14's node types (see the module docstring for the classes
        an older host lacks), fields and positions.

    Raises:
        TreeSitterSyntaxError: tree-sitter found a syntax error (the message names the first
            one's line), the text holds a construct CPython rejects that the converter checks
            for (Python 2 ``print``, bad string prefixes, ...), the nesting is too deep for the
            converter's stack, or the conversion failed for any other reason (the message says
            which node; please report it with the file).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise TreeSitterSyntaxError(f"syntax error at line {line}: source code cannot contain null bytes",
                                    lineno=line)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        source = text.encode("utf-8")
    except UnicodeEncodeError as error:
        line = text.count("\n", 0, error.start) + 1
        raise TreeSitterSyntaxError(f"syntax error at line {line}: the text holds an unpaired surrogate",
                                    lineno=line) from None
    try:
        return _convert(source)
    except TreeSitterSyntaxError:
        raise
    except (RecursionError, MemoryError):
        raise TreeSitterSyntaxError("syntax error at line 1: nesting too deep for the tree-sitter converter",
                                    lineno=1) from None
    except Exception as error:  # noqa: BLE001 - the contract: only TreeSitterSyntaxError escapes
        raise TreeSitterSyntaxError(f"syntax error at line 1: the tree-sitter converter failed "
                                    f"({type(error).__name__}: {error}); please report this file",
                                    lineno=1) from error


def _convert(source: bytes) -> ast.Module:
    """Parses and converts, repairing what tree-sitter-python 0.25 parses wrongly or not at all.

    Two repairs change what tree-sitter sees without moving a byte (the converter reads every
    token's text from the original ``source``):

    * The grammar has no PEP 696 type parameter defaults (``[T = int]``): each ``=`` that
      tree-sitter reports as an error inside a type parameter list becomes a ``:``, and the
      converter reads a ``:`` at a recorded offset as ``= default``.
    * ``f"{x:=^10}"`` (a format spec starting with ``=``) lexes as a walrus: the ``=`` after
      a ``:=`` that tree-sitter reports as an error inside a replacement field becomes a
      space, so the spec is a spec again (its text is read from the original source).
    * ``type(x).attr = 1`` parses as a type alias statement and ``print >> f, x`` (a tuple in
      Python 3) as a Python 2 print statement: the converter asks for the keyword to be
      hidden (``tYpe``, ``pRint``) and the text is parsed again. If the text then has an
      error on that line, the converter's own message is raised (``print "x"`` is reported
      as a Python 2 print statement).
    """
    parser = Parser(_LANGUAGE)
    patched = source
    default_colons: set[int] = set()
    spec_equals: set[int] = set()
    hidden_keywords: dict[int, _Reparse] = {}
    for _ in range(16):
        tree = parser.parse(patched)
        if tree.root_node.has_error:
            offsets = _type_param_default_signs(tree.root_node) - default_colons
            spec_signs = _format_spec_signs(tree.root_node) - spec_equals
            spec_equals |= spec_signs
            if not offsets and not spec_signs:
                error = _first_error(tree.root_node)
                for request in hidden_keywords.values():
                    if request.lineno == error.lineno:
                        raise TreeSitterSyntaxError(request.message, lineno=request.lineno) from None
                raise error
            default_colons |= offsets
        else:
            try:
                return _Converter(source, frozenset(default_colons)).module(tree.root_node)
            except _Reparse as request:
                if request.offset in hidden_keywords:
                    raise TreeSitterSyntaxError(request.message, lineno=request.lineno) from None
                hidden_keywords[request.offset] = request
        buffer = bytearray(source)
        for offset in default_colons:
            buffer[offset] = ord(":")
        for offset in hidden_keywords:
            buffer[offset + 1] = ord("Y")
        for offset in spec_equals:
            buffer[offset] = ord(" ")
        patched = bytes(buffer)
    raise TreeSitterSyntaxError("syntax error at line 1: too many repairs for the tree-sitter converter", lineno=1)


class _Reparse(Exception):
    """The tree misreads a ``type`` keyword at ``offset``: hide it and parse again."""

    def __init__(self, offset: int, message: str, lineno: int) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.lineno = lineno


def _type_param_default_signs(root: Node) -> set[int]:
    """Byte offsets of ``=`` tokens that are children of ERROR nodes inside a type parameter list."""
    found: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, inside = stack.pop()
        inside = inside or node.type == "type_parameter"
        for child in node.children:
            if child.is_error and inside:
                found.update(token.start_byte for token in child.children if token.type == "=")
            if child.has_error:
                stack.append((child, inside))
    return found


def _format_spec_signs(root: Node) -> set[int]:
    """Byte offsets of the ``=`` of erroneous ``:=`` right inside an f-string's braces."""
    found: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if child.type == "named_expression" and node.type in ("interpolation", "format_expression"):
                walrus = child.children[1] if child.child_count > 1 else None
                if walrus is not None and walrus.type == ":=" and child.has_error:
                    found.add(walrus.start_byte + 1)
            if child.has_error:
                stack.append(child)
    return found


def _first_error(root: Node) -> TreeSitterSyntaxError:
    """The error to raise for the first ERROR or MISSING node in document order."""
    node = root
    while True:
        for child in node.children:
            if child.is_missing or child.is_error or child.has_error:
                node = child
                break
        else:
            break
        if node.is_missing:
            break
    line = node.start_point[0] + 1
    if node.is_missing:
        return TreeSitterSyntaxError(f"syntax error at line {line}: expected {node.type!r}", lineno=line)
    return TreeSitterSyntaxError(f"syntax error at line {line}: invalid syntax", lineno=line)


def _kids(node: Node) -> list[Node]:
    """The node's children without comments and line continuations."""
    return [child for child in node.children if not child.is_extra]


def _span(node: Node) -> tuple[int, int, int, int]:
    start = node.start_point
    end = node.end_point
    return (start[0] + 1, start[1], end[0] + 1, end[1])


def _join(first: Node, last: Node) -> tuple[int, int, int, int]:
    start = first.start_point
    end = last.end_point
    return (start[0] + 1, start[1], end[0] + 1, end[1])


def _mk(cls: Any, fields: dict[str, Any], pos: tuple[int, int, int, int]) -> Any:
    """A node of ``cls`` with ``fields`` and positions ``pos`` (bypasses ``__init__`` for speed)."""
    fields["lineno"], fields["col_offset"], fields["end_lineno"], fields["end_col_offset"] = pos
    node = _new(cls)
    node.__dict__ = fields
    return node


def _at(cls: Any, fields: dict[str, Any], node: Node) -> Any:
    """A node of ``cls`` with ``fields``, spanning tree-sitter node ``node``."""
    start = node.start_point
    end = node.end_point
    fields["lineno"] = start[0] + 1
    fields["col_offset"] = start[1]
    fields["end_lineno"] = end[0] + 1
    fields["end_col_offset"] = end[1]
    result = _new(cls)
    result.__dict__ = fields
    return result


def _mk_bare(cls: Any, fields: dict[str, Any]) -> Any:
    """A node of ``cls`` that has no positions (``arguments``, ``comprehension``...)."""
    node = _new(cls)
    node.__dict__ = fields
    return node


def _from_to(first: ast.AST, last: ast.AST) -> tuple[int, int, int, int]:
    return (first.lineno, first.col_offset, last.end_lineno, last.end_col_offset)  # type: ignore[attr-defined]


def _with_end(node: Node, last: ast.AST) -> tuple[int, int, int, int]:
    start = node.start_point
    return (start[0] + 1, start[1], last.end_lineno, last.end_col_offset)  # type: ignore[attr-defined]


class _Converter:
    """Converts one tree-sitter tree; a converter is used for one file only.

    Checks made on top of tree-sitter's grammar (CPython refuses these, tree-sitter does not):
    Python 2 ``print``/``exec`` statements, ``<>``, backquotes and ``L`` suffixes, string
    prefixes, mixing bytes with str, undecodable escapes, assignment targets, an empty block,
    parameter order, starred expressions in brackets, ``as`` outside ``with``.
    """

    def __init__(self, source: bytes, default_colons: frozenset[int]) -> None:
        self._source = source
        self._default_colons = default_colons
        self._semicolon_ends: dict[int, tuple[int, int]] = {}
        self._expr_handlers: dict[str, Callable[[Node], Any]] = _Handlers(self._refuse, {
            "identifier": self._name,
            "integer": self._number,
            "float": self._number,
            "true": self._true,
            "false": self._false,
            "none": self._none,
            "ellipsis": self._ellipsis,
            "string": self._strings,
            "concatenated_string": self._strings,
            "binary_operator": self._binary,
            "unary_operator": self._unary,
            "not_operator": self._unary,
            "boolean_operator": self._boolean,
            "comparison_operator": self._comparison,
            "attribute": self._postfix,
            "call": self._postfix,
            "subscript": self._postfix,
            "list": self._list,
            "set": self._set,
            "tuple": self._tuple,
            "dictionary": self._dictionary,
            "list_comprehension": self._listcomp,
            "set_comprehension": self._setcomp,
            "dictionary_comprehension": self._dictcomp,
            "generator_expression": self._genexp,
            "parenthesized_expression": self._parenthesized,
            "lambda": self._lambda,
            "conditional_expression": self._conditional,
            "named_expression": self._named,
            "await": self._await,
            "yield": self._yield,
            "list_splat": self._starred,
            "list_splat_pattern": self._starred,
            "expression_list": self._bare_tuple,
            "pattern_list": self._bare_tuple,
            "tuple_pattern": self._tuple,
            "list_pattern": self._list,
            "type": self._type,
            "generic_type": self._generic_type,
            "union_type": self._binary,
            "member_type": self._member_type,
            "splat_type": self._splat_type,
            "keyword_identifier": self._name,
        })
        self._stmt_handlers: dict[str, Callable[[Node], Any]] = {
            "expression_statement": self._expression_statement,
            "return_statement": self._return,
            "delete_statement": self._delete,
            "raise_statement": self._raise,
            "pass_statement": self._pass,
            "break_statement": self._break,
            "continue_statement": self._continue,
            "global_statement": self._global,
            "nonlocal_statement": self._nonlocal,
            "import_statement": self._import,
            "import_from_statement": self._import_from,
            "future_import_statement": self._import_from,
            "assert_statement": self._assert,
            "type_alias_statement": self._type_alias,
            "if_statement": self._if,
            "for_statement": self._for,
            "while_statement": self._while,
            "try_statement": self._try,
            "with_statement": self._with,
            "function_definition": self._function,
            "class_definition": self._class,
            "decorated_definition": self._decorated,
            "match_statement": self._match,
        }

    # -- errors ---------------------------------------------------------------------------

    @staticmethod
    def _error(node: Node, message: str) -> TreeSitterSyntaxError:
        line = node.start_point[0] + 1
        return TreeSitterSyntaxError(f"syntax error at line {line}: {message}", lineno=line)

    # -- statements -----------------------------------------------------------------------

    def module(self, root: Node) -> ast.Module:
        return _mk_bare(ast.Module, {"body": self._statements(root, 0), "type_ignores": []})

    def _statements(self, node: Node, column: int | None = None) -> list[ast.stmt]:
        """The statements of a module or block, checking that those starting a line line up
        (tree-sitter accepts a dedent to a column no enclosing block started at)."""
        handlers = self._stmt_handlers
        body = []
        last_row = -1
        for child in node.children:
            if child.is_named and not child.is_extra:
                start = child.start_point
                if start[0] > last_row:
                    if column is None:
                        column = start[1]
                    elif start[1] != column:
                        message = "unexpected indent" if start[1] > column else "unindent does not match any outer indentation level"
                        raise self._error(child, message)
                last_row = child.end_point[0]
                handler = handlers.get(child.type)
                if handler is None:
                    raise self._unsupported(child)
                body.append(handler(child))
        return body

    def _block(self, node: Node | None, owner: Node) -> list[ast.stmt]:
        body = self._statements(node) if node is not None else []
        if not body:
            raise self._error(owner, "expected an indented block")
        for child in reversed(node.children):  # type: ignore[union-attr]
            if not child.is_extra:
                if child.type == ";":
                    end = child.end_point
                    self._semicolon_ends[id(body[-1])] = (end[0] + 1, end[1])
                break
        return body

    def _end(self, node: Node, last: ast.AST) -> tuple[int, int, int, int]:
        """From ``node``'s start to the end of ``last``, the last statement of its last block:
        CPython ends a compound statement at its last token, a trailing ``;`` included."""
        start = node.start_point
        end = self._semicolon_ends.get(id(last))
        if end is None:
            return (start[0] + 1, start[1], last.end_lineno, last.end_col_offset)  # type: ignore[attr-defined]
        return (start[0] + 1, start[1], end[0], end[1])

    def _unsupported(self, node: Node) -> Exception:
        if node.type in ("print_statement", "exec_statement"):
            error = self._error(node, f"Python 2 {node.type.split('_')[0]} statement (missing parentheses?)")
            return _Reparse(node.start_byte, str(error), error.lineno or 1)
        return self._error(node, f"invalid syntax ({node.type} here)")

    def _expression_statement(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        if len(kids) == 1:
            child = kids[0]
            kind = child.type
            if kind == "assignment":
                return self._assignment(child)
            if kind == "augmented_assignment":
                return self._augmented(child)
            return _at(ast.Expr, {"value": self.expr(child)}, node)
        elts = [self._element(child) for child in kids if child.is_named]
        value = _at(ast.Tuple, {"elts": elts, "ctx": _LOAD}, node)
        return _at(ast.Expr, {"value": value}, node)

    def _assignment(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        if kids[1].type == ":":
            target_node = kids[0]
            if target_node.type == "pattern_list":
                raise self._error(node, "only single target (not tuple) can be annotated")
            target = self._target(target_node, _STORE)
            if type(target) not in (ast.Name, ast.Attribute, ast.Subscript):
                raise self._error(node, "illegal target for annotation")
            fields = {
                "target": target,
                "annotation": self.expr(kids[2]),
                "value": self._right_hand_side(kids[4]) if len(kids) > 4 else None,
                "simple": int(target_node.type == "identifier"),
            }
            return _at(ast.AnnAssign, fields, node)
        targets = []
        current = node
        while True:
            targets.append(self._target(kids[0], _STORE))
            right = kids[2]
            if right.type != "assignment":
                break
            current = right
            kids = _kids(current)
            if kids[1].type != "=":
                raise self._error(current, "invalid syntax (annotation in an assignment chain)")
        if right.type == "augmented_assignment":
            raise self._error(right, "invalid syntax (augmented assignment in an assignment chain)")
        fields = {"targets": targets, "value": self._right_hand_side(right), "type_comment": None}
        return _at(ast.Assign, fields, node)

    def _right_hand_side(self, node: Node) -> ast.expr:
        if node.type in ("assignment", "augmented_assignment"):
            raise self._error(node, "invalid syntax (assignment in an expression)")
        return self.expr(node)

    def _augmented(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        target = self._target(kids[0], _STORE)
        if type(target) not in (ast.Name, ast.Attribute, ast.Subscript):
            raise self._error(node, "illegal expression for augmented assignment")
        fields = {"target": target, "op": _AUGOPS[kids[1].type], "value": self._right_hand_side(kids[2])}
        return _at(ast.AugAssign, fields, node)

    def _return(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        value = self.expr(kids[1]) if len(kids) > 1 else None
        return _at(ast.Return, {"value": value}, node)

    def _delete(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        if kids[1].type == "expression_list":
            targets = [self._target(child, _DEL) for child in _kids(kids[1]) if child.is_named]
        else:
            targets = [self._target(kids[1], _DEL)]
        return _at(ast.Delete, {"targets": targets}, node)

    def _raise(self, node: Node) -> ast.stmt:
        exc = cause = None
        kids = _kids(node)
        for index, child in enumerate(kids):
            if child.type == "from":
                cause = self.expr(kids[index + 1])
                break
            if index and child.is_named:
                exc = self.expr(child)
        return _at(ast.Raise, {"exc": exc, "cause": cause}, node)

    def _pass(self, node: Node) -> ast.stmt:
        return _at(ast.Pass, {}, node)

    def _break(self, node: Node) -> ast.stmt:
        return _at(ast.Break, {}, node)

    def _continue(self, node: Node) -> ast.stmt:
        return _at(ast.Continue, {}, node)

    def _global(self, node: Node) -> ast.stmt:
        names = [self._identifier(child) for child in node.children if child.type == "identifier"]
        return _at(ast.Global, {"names": names}, node)

    def _nonlocal(self, node: Node) -> ast.stmt:
        names = [self._identifier(child) for child in node.children if child.type == "identifier"]
        return _at(ast.Nonlocal, {"names": names}, node)

    def _dotted(self, node: Node) -> str:
        return ".".join(self._identifier(child) for child in node.children if child.type == "identifier")

    def _alias(self, node: Node) -> ast.alias:
        if node.type == "aliased_import":
            kids = _kids(node)
            fields = {"name": self._dotted(kids[0]), "asname": self._identifier(kids[2])}
        else:
            fields = {"name": self._dotted(node), "asname": None}
        return _at(ast.alias, fields, node)

    def _import(self, node: Node) -> ast.stmt:
        names = [self._alias(child) for child in node.children if child.type in ("dotted_name", "aliased_import")]
        return _at(ast.Import, {"names": names}, node)

    def _import_from(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        names = []
        for child in kids[3:]:
            kind = child.type
            if kind in ("dotted_name", "aliased_import"):
                names.append(self._alias(child))
            elif kind == "wildcard_import":
                names.append(_at(ast.alias, {"name": "*", "asname": None}, child))
        source = kids[1]
        if node.type == "future_import_statement":
            module, level = "__future__", 0
        elif source.type == "relative_import":
            parts = _kids(source)
            level = self._token(parts[0]).count(".")
            module = self._dotted(parts[1]) if len(parts) > 1 else None
        else:
            module, level = self._dotted(source), 0
        return _at(ast.ImportFrom, {"module": module, "names": names, "level": level}, node)

    def _assert(self, node: Node) -> ast.stmt:
        values = [self.expr(child) for child in _kids(node) if child.is_named]
        if len(values) > 2:
            raise self._error(node, "invalid syntax (assert takes a test and a message)")
        fields = {"test": values[0], "msg": values[1] if len(values) > 1 else None}
        return _at(ast.Assert, fields, node)

    def _type_alias(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        left = self._unwrap_type(kids[1])
        type_params = []
        if left.type == "generic_type":
            name_node, params = _kids(left)
            type_params = self._type_params(params)
        elif left.type == "identifier":
            name_node = left
        else:
            error = self._error(left, "invalid syntax (type alias name)")
            raise _Reparse(kids[0].start_byte, str(error), error.lineno or 1)
        name = _at(ast.Name, {"id": self._identifier(name_node), "ctx": _STORE}, name_node)
        fields = {"name": name, "type_params": type_params, "value": self.expr(kids[3])}
        return _at(TypeAlias, fields, node)

    def _if(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        alternatives = [child for child in kids if child.type in ("elif_clause", "else_clause")]
        orelse: list[ast.stmt] = []
        if alternatives and alternatives[-1].type == "else_clause":
            clause = alternatives.pop()
            orelse = self._block(clause.child_by_field_name("body"), clause)
        for clause in reversed(alternatives):
            parts = _kids(clause)
            body = self._block(parts[3] if len(parts) > 3 else None, clause)
            fields = {"test": self.expr(parts[1]), "body": body, "orelse": orelse}
            orelse = [_mk(ast.If, fields, self._end(clause, (orelse or body)[-1]))]
        body = self._block(node.child_by_field_name("consequence"), node)
        fields = {"test": self.expr(kids[1]), "body": body, "orelse": orelse}
        return _mk(ast.If, fields, self._end(node, (orelse or body)[-1]))

    def _else(self, node: Node | None) -> list[ast.stmt]:
        if node is None:
            return []
        return self._block(node.child_by_field_name("body"), node)

    def _for(self, node: Node) -> ast.stmt:
        is_async = node.children[0].type == "async"
        body = self._block(node.child_by_field_name("body"), node)
        orelse = self._else(node.child_by_field_name("alternative"))
        fields = {
            "target": self._target(node.child_by_field_name("left"), _STORE),
            "iter": self.expr(node.child_by_field_name("right")),
            "body": body,
            "orelse": orelse,
            "type_comment": None,
        }
        return _mk(ast.AsyncFor if is_async else ast.For, fields, self._end(node, (orelse or body)[-1]))

    def _while(self, node: Node) -> ast.stmt:
        body = self._block(node.child_by_field_name("body"), node)
        orelse = self._else(node.child_by_field_name("alternative"))
        fields = {"test": self.expr(node.child_by_field_name("condition")), "body": body, "orelse": orelse}
        return _mk(ast.While, fields, self._end(node, (orelse or body)[-1]))

    def _try(self, node: Node) -> ast.stmt:
        body = self._block(node.child_by_field_name("body"), node)
        handlers = []
        orelse: list[ast.stmt] = []
        finalbody: list[ast.stmt] = []
        star = None
        for child in node.children:
            kind = child.type
            if kind == "except_clause":
                is_star = child.children[1].type == "*"
                if star is None:
                    star = is_star
                elif star != is_star:
                    raise self._error(child, "cannot have both 'except' and 'except*' on the same 'try'")
                handlers.append(self._handler(child))
            elif kind == "else_clause":
                orelse = self._else(child)
            elif kind == "finally_clause":
                finalbody = self._block(_last_block(child), child)
        if not handlers and not finalbody:
            raise self._error(node, "expected 'except' or 'finally' block")
        if orelse and not handlers:
            raise self._error(node, "invalid syntax ('else' without 'except')")
        last = (finalbody or orelse or handlers or body)[-1]
        fields = {"body": body, "handlers": handlers, "orelse": orelse, "finalbody": finalbody}
        return _mk(ast.TryStar if star else ast.Try, fields, self._end(node, last))

    def _handler(self, node: Node) -> ast.excepthandler:
        kids = _kids(node)
        index = 2 if kids[1].type == "*" else 1
        values: list[Node] = []
        name = None
        while kids[index].type != ":":
            child = kids[index]
            if child.type == "as":
                name = self._identifier(self._unwrap_paren(kids[index + 1]))
                index += 2
                continue
            if child.type == "as_pattern":
                parts = _kids(child)
                values.append(parts[0])
                name = self._identifier(self._unwrap_paren(parts[2]))
            elif child.is_named:
                values.append(child)
            index += 1
        body = self._block(kids[index + 1] if index + 1 < len(kids) else None, node)
        exc_type = None
        if len(values) == 1:
            exc_type = self.expr(values[0])
        elif values:
            elts = [self.expr(value) for value in values]
            exc_type = _mk(ast.Tuple, {"elts": elts, "ctx": _LOAD}, _join(values[0], values[-1]))
        if index == 2 and exc_type is None:
            raise self._error(node, "expected one or more exception types")
        fields = {"type": exc_type, "name": name, "body": body}
        return _mk(ast.ExceptHandler, fields, self._end(node, body[-1]))

    def _unwrap_paren(self, node: Node) -> Node:
        if node.type == "as_pattern_target":
            node = _kids(node)[0]
        if node.type != "identifier":
            raise self._error(node, "invalid syntax (the name after 'as' must be an identifier)")
        return node

    def _with(self, node: Node) -> ast.stmt:
        is_async = node.children[0].type == "async"
        items = []
        for child in _kids(node):
            if child.type == "with_clause":
                items = [self._withitem(item) for item in child.children if item.type == "with_item"]
        body = self._block(node.child_by_field_name("body"), node)
        fields = {"items": items, "body": body, "type_comment": None}
        return _mk(ast.AsyncWith if is_async else ast.With, fields, self._end(node, body[-1]))

    def _withitem(self, node: Node) -> ast.withitem:
        value = _kids(node)[0]
        target = None
        if value.type == "parenthesized_expression" and _kids(value)[1].type == "as_pattern":
            value = _kids(value)[1]
        if value.type == "as_pattern":
            parts = _kids(value)
            value = parts[0]
            target = self._target(_kids(parts[2])[0], _STORE)
        return _mk_bare(ast.withitem, {"context_expr": self.expr(value), "optional_vars": target})

    def _function(self, node: Node) -> ast.stmt:
        is_async = node.children[0].type == "async"
        params = node.child_by_field_name("type_parameters")
        returns = node.child_by_field_name("return_type")
        body = self._block(node.child_by_field_name("body"), node)
        fields = {
            "name": self._identifier(node.child_by_field_name("name")),
            "args": self._parameters(node.child_by_field_name("parameters")),
            "body": body,
            "decorator_list": [],
            "returns": self.expr(returns) if returns is not None else None,
            "type_comment": None,
        }
        type_params = self._type_params(params) if params is not None else []
        fields["type_params"] = type_params
        result = _mk(ast.AsyncFunctionDef if is_async else ast.FunctionDef, fields, self._end(node, body[-1]))
        return result

    def _class(self, node: Node) -> ast.stmt:
        params = node.child_by_field_name("type_parameters")
        superclasses = node.child_by_field_name("superclasses")
        body = self._block(node.child_by_field_name("body"), node)
        bases: list[ast.expr] = []
        keywords: list[ast.keyword] = []
        if superclasses is not None:
            bases, keywords = self._arguments(superclasses)
        fields = {
            "name": self._identifier(node.child_by_field_name("name")),
            "bases": bases,
            "keywords": keywords,
            "body": body,
            "decorator_list": [],
            "type_params": self._type_params(params) if params is not None else [],
        }
        return _mk(ast.ClassDef, fields, self._end(node, body[-1]))

    def _decorated(self, node: Node) -> ast.stmt:
        decorators = [self.expr(_kids(child)[1]) for child in node.children if child.type == "decorator"]
        definition = node.child_by_field_name("definition")
        result = self._stmt_handlers[definition.type](definition)
        result.decorator_list = decorators
        return result

    # -- match ----------------------------------------------------------------------------

    def _match(self, node: Node) -> ast.stmt:
        kids = _kids(node)
        colon = next(index for index, child in enumerate(kids) if child.type == ":")
        subjects = kids[1:colon]
        if len(subjects) == 1:
            subject = self.expr(subjects[0])
        else:
            elts = [self._element(child) for child in subjects if child.is_named]
            subject = _mk(ast.Tuple, {"elts": elts, "ctx": _LOAD}, _join(subjects[0], subjects[-1]))
        block = kids[colon + 1] if colon + 1 < len(kids) else None
        cases = [self._case(child) for child in (block.children if block is not None else ()) if child.type == "case_clause"]
        if not cases:
            raise self._error(node, "expected an indented block of 'case' clauses")
        fields = {"subject": subject, "cases": cases}
        return _mk(ast.Match, fields, self._end(node, cases[-1].body[-1]))

    def _case(self, node: Node) -> ast.match_case:
        patterns: list[Node] = []
        guard = None
        body_node = None
        last = node
        in_patterns = True
        for child in _kids(node)[1:]:
            kind = child.type
            if kind == "if_clause":
                guard = self.expr(_kids(child)[1])
                in_patterns = False
            elif kind == "block":
                body_node = child
            elif kind == ":":
                in_patterns = False
            elif in_patterns:
                last = child
                if kind != ",":
                    patterns.append(child)
        if len(patterns) == 1 and last.type != ",":
            pattern = self._pattern(patterns[0])
            if type(pattern) is ast.MatchStar:
                raise self._error(node, "invalid syntax (a star pattern outside a sequence)")
        else:
            elements = [self._pattern(child) for child in patterns]
            pattern = _mk(ast.MatchSequence, {"patterns": elements}, _join(patterns[0], last))
        body = self._block(body_node, node)
        return _mk_bare(ast.match_case, {"pattern": pattern, "guard": guard, "body": body})

    def _pattern(self, node: Node) -> ast.pattern:
        """Converts a case_pattern (or a node standing for one) to a pattern node."""
        kind = node.type
        if kind == "case_pattern":
            parts = _kids(node)
            if len(parts) == 1:
                return self._pattern(parts[0])
            return self._simple_pattern(parts, node)
        if kind == "as_pattern":
            parts = _kids(node)
            name_node = parts[2]
            pattern = self._pattern(parts[0])
            name = self._identifier(name_node)
            if name == "_":
                raise self._error(name_node, "cannot use '_' as a target")
            return _at(ast.MatchAs, {"pattern": pattern, "name": name}, node)
        return self._simple_pattern([node], node)

    def _simple_pattern(self, parts: list[Node], owner: Node) -> ast.pattern:
        """Converts the tokens of one simple pattern (``-1``, ``a.b``, ``[x]``, ``_``...)."""
        first = parts[0]
        kind = first.type
        pos = _join(first, parts[-1])
        if len(parts) == 2 and kind == "-":
            value = self._signed_number(parts)
            return _mk(ast.MatchValue, {"value": value}, pos)
        if len(parts) != 1:
            raise self._error(owner, "invalid pattern")
        if kind == "case_pattern" or kind == "as_pattern":
            return self._pattern(first)
        if kind == "_":
            return _mk(ast.MatchAs, {"pattern": None, "name": None}, pos)
        if kind == "dotted_name":
            names = [child for child in first.children if child.type == "identifier"]
            if len(names) == 1:
                name = self._identifier(names[0])
                return _mk(ast.MatchAs, {"pattern": None, "name": None if name == "_" else name}, pos)
            return _mk(ast.MatchValue, {"value": self._dotted_expr(first)}, pos)
        if kind in ("true", "false", "none"):
            value = {"true": True, "false": False, "none": None}[kind]
            return _mk(ast.MatchSingleton, {"value": value}, pos)
        if kind in ("integer", "float", "string", "concatenated_string", "complex_pattern"):
            value = self._pattern_value(first)
            return _mk(ast.MatchValue, {"value": value}, pos)
        if kind == "union_pattern":
            groups = _split(_kids(first), "|")
            patterns = []
            for group in groups:
                pattern = self._simple_pattern(group, first)
                if type(pattern) is ast.MatchOr and group[0].type == "union_pattern":
                    patterns.extend(pattern.patterns)
                else:
                    patterns.append(pattern)
            return _mk(ast.MatchOr, {"patterns": patterns}, pos)
        if kind in ("list_pattern", "tuple_pattern"):
            inner = _kids(first)[1:-1]
            groups = _split(inner, ",")
            if kind == "tuple_pattern" and len(groups) == 1 and inner and inner[-1].type != ",":
                return self._simple_pattern(groups[0], first)
            patterns = [self._simple_pattern(group, first) for group in groups]
            return _mk(ast.MatchSequence, {"patterns": patterns}, pos)
        if kind == "splat_pattern":
            star, target = _kids(first)
            if star.type != "*":
                raise self._error(first, "invalid syntax ('**' outside a mapping pattern)")
            name = self._identifier(target) if target.type == "identifier" else "_"
            return _mk(ast.MatchStar, {"name": None if name == "_" else name}, pos)
        if kind == "dict_pattern":
            return self._mapping_pattern(first, pos)
        if kind == "class_pattern":
            return self._class_pattern(first, pos)
        if kind == "keyword_pattern":
            raise self._error(first, "invalid syntax (keyword pattern outside a class pattern)")
        raise self._error(first, f"invalid pattern ({kind})")

    def _mapping_pattern(self, node: Node, pos: tuple[int, int, int, int]) -> ast.pattern:
        keys = []
        patterns = []
        rest = None
        group: list[Node] = []
        kids = _kids(node)[1:-1]
        index = 0
        while index < len(kids):
            child = kids[index]
            kind = child.type
            if kind == ":":
                keys.append(self._mapping_key(group, node))
                patterns.append(self._pattern(kids[index + 1]))
                group = []
                index += 2
                continue
            if kind == "splat_pattern":
                star, target = _kids(child)
                if star.type != "**" or target.type != "identifier":
                    raise self._error(child, "invalid syntax (mapping pattern rest)")
                rest = self._identifier(target)
            elif kind != ",":
                group.append(child)
            index += 1
        return _mk(ast.MatchMapping, {"keys": keys, "patterns": patterns, "rest": rest}, pos)

    def _mapping_key(self, group: list[Node], owner: Node) -> ast.expr:
        if len(group) == 2 and group[0].type == "-":
            return self._signed_number(group)
        if len(group) != 1:
            raise self._error(owner, "invalid mapping pattern key")
        node = group[0]
        kind = node.type
        if kind == "dotted_name":
            if sum(1 for child in node.children if child.type == "identifier") < 2:
                raise self._error(node, "mapping pattern keys may only match literals and attribute lookups")
            return self._dotted_expr(node)
        if kind in ("true", "false", "none"):
            return self.expr(node)
        return self._pattern_value(node)

    def _class_pattern(self, node: Node, pos: tuple[int, int, int, int]) -> ast.pattern:
        kids = _kids(node)
        positional = []
        kwd_attrs = []
        kwd_patterns = []
        for child in kids[2:-1]:
            if child.type != "case_pattern":
                continue
            inner = _kids(child)
            if len(inner) == 1 and inner[0].type == "as_pattern":
                head = _kids(_kids(inner[0])[0])
                if len(head) == 1 and head[0].type == "keyword_pattern":
                    # ``value=str() as doc`` parses as ``(value=str()) as doc``
                    parts = _kids(head[0])
                    alias = _kids(inner[0])[2]
                    pattern = self._simple_pattern(parts[2:], head[0])
                    fields = {"pattern": pattern, "name": self._identifier(alias)}
                    kwd_attrs.append(self._identifier(parts[0]))
                    kwd_patterns.append(_mk(ast.MatchAs, fields, _join(parts[2], alias)))
                    continue
            if len(inner) == 1 and inner[0].type == "keyword_pattern":
                parts = _kids(inner[0])
                kwd_attrs.append(self._identifier(parts[0]))
                kwd_patterns.append(self._simple_pattern(parts[2:], inner[0]))
            elif kwd_attrs:
                raise self._error(child, "positional patterns follow keyword patterns")
            else:
                pattern = self._pattern(child)
                if type(pattern) is ast.MatchStar:
                    raise self._error(child, "invalid syntax (a star pattern outside a sequence)")
                positional.append(pattern)
        fields = {"cls": self._dotted_expr(kids[0]), "patterns": positional, "kwd_attrs": kwd_attrs,
                  "kwd_patterns": kwd_patterns}
        return _mk(ast.MatchClass, fields, pos)

    def _dotted_expr(self, node: Node) -> ast.expr:
        """``a.b.c`` as a Name/Attribute chain (Load), each Attribute spanning from ``a``."""
        names = [child for child in node.children if child.type == "identifier"]
        value = self._name(names[0])
        for name in names[1:]:
            fields = {"value": value, "attr": self._identifier(name), "ctx": _LOAD}
            value = _mk(ast.Attribute, fields, _join(names[0], name))
        return value

    def _signed_number(self, parts: list[Node]) -> ast.expr:
        operand = self._pattern_value(parts[1])
        return _mk(ast.UnaryOp, {"op": _UNARYOPS["-"], "operand": operand}, _join(parts[0], parts[1]))

    def _pattern_value(self, node: Node) -> ast.expr:
        kind = node.type
        if kind == "complex_pattern":
            kids = _kids(node)
            if kids[0].type == "-":
                left = self._signed_number(kids[:2])
                kids = kids[2:]
            else:
                left = self._number(kids[0])
                kids = kids[1:]
            right = self._number(kids[1])
            if type(right.value) is not complex:
                raise self._error(node, "imaginary number required in complex literal")
            fields = {"left": left, "op": _BINOPS[kids[0].type], "right": right}
            return _at(ast.BinOp, fields, node)
        if kind in ("integer", "float"):
            return self._number(node)
        value = self._strings(node)
        if type(value) is not ast.Constant:
            raise self._error(node, "patterns may only match literals and attribute lookups")
        return value

    # -- type parameters ------------------------------------------------------------------

    def _unwrap_type(self, node: Node) -> Node:
        while node.type == "type":
            kids = _kids(node)
            if len(kids) != 1:
                break
            node = kids[0]
        return node

    def _type_params(self, node: Node) -> list[Any]:
        result = []
        for child in _kids(node):
            if child.type in ("[", "]", ","):
                continue
            operands: list[Node] = []
            colons: list[Node] = []
            stack = [child]
            while stack:
                current = self._unwrap_type(stack.pop())
                if current.type == "constrained_type":
                    left, colon, right = _kids(current)
                    stack.append(right)
                    stack.append(colon)
                    stack.append(left)
                elif current.type == ":":
                    colons.append(current)
                else:
                    operands.append(current)
            result.append(self._type_param(child, operands, colons))
        return result

    def _type_param(self, node: Node, operands: list[Node], colons: list[Node]) -> Any:
        head = operands[0]
        bound = default = None
        for colon, operand in zip(colons, operands[1:]):
            if colon.start_byte in self._default_colons:
                if default is not None:
                    raise self._error(colon, "invalid syntax (two defaults)")
                default = self.expr(operand)
            else:
                if bound is not None or default is not None:
                    raise self._error(colon, "invalid syntax (type parameter bound)")
                bound = self.expr(operand)
        pos = _span(node)
        if head.type == "identifier":
            return _mk(TypeVar, {"name": self._identifier(head), "bound": bound, "default_value": default}, pos)
        if head.type == "splat_type":
            star, name = _kids(head)
            if bound is not None:
                raise self._error(head, "cannot use bound with TypeVarTuple or ParamSpec")
            cls = TypeVarTuple if star.type == "*" else ParamSpec
            return _mk(cls, {"name": self._identifier(name), "default_value": default}, pos)
        raise self._error(head, "invalid syntax (type parameter)")

    # -- parameters -----------------------------------------------------------------------

    def _arg(self, name: Node, annotation: Node | None) -> ast.arg:
        fields = {"arg": self._identifier(name), "annotation": None, "type_comment": None}
        if annotation is None:
            return _at(ast.arg, fields, name)
        fields["annotation"] = self.expr(annotation)
        return _mk(ast.arg, fields, _join(name, annotation))

    def _parameters(self, node: Node | None) -> ast.arguments:
        posonly: list[ast.arg] = []
        args: list[ast.arg] = []
        defaults: list[ast.expr] = []
        kwonly: list[ast.arg] = []
        kw_defaults: list[ast.expr | None] = []
        vararg = kwarg = None
        star = False
        for child in _kids(node) if node is not None else ():
            kind = child.type
            if not child.is_named:
                continue
            if kwarg is not None:
                raise self._error(child, "arguments cannot follow var-keyword argument")
            default = None
            if kind == "positional_separator":
                if posonly or star or not args:
                    raise self._error(child, "invalid syntax ('/' must follow a parameter, once, before '*')")
                posonly, args = args, []
                continue
            if kind == "keyword_separator":
                if star:
                    raise self._error(child, "* argument may appear only once")
                star = True
                continue
            if kind in ("list_splat_pattern", "dictionary_splat_pattern", "typed_parameter"):
                parts = _kids(child)
                annotation = None
                if kind == "typed_parameter":
                    annotation = child.child_by_field_name("type")
                    if parts[0].type != "identifier":
                        kind = parts[0].type
                        parts = _kids(parts[0])
                    else:
                        parts = [parts[0], parts[0]]
                name = parts[1]
                if name.type != "identifier":
                    raise self._error(child, "invalid syntax (parameter name)")
                arg = self._arg(name, annotation)
                if kind == "list_splat_pattern":
                    if star:
                        raise self._error(child, "* argument may appear only once")
                    star = True
                    vararg = arg
                    continue
                if kind == "dictionary_splat_pattern":
                    kwarg = arg
                    continue
            elif kind == "identifier":
                arg = self._arg(child, None)
            elif kind in ("default_parameter", "typed_default_parameter"):
                name = child.child_by_field_name("name")
                if name.type != "identifier":
                    raise self._error(child, "invalid syntax (Python 2 tuple parameter)")
                arg = self._arg(name, child.child_by_field_name("type"))
                default = self.expr(child.child_by_field_name("value"))
            else:
                raise self._error(child, "invalid syntax (parameter)")
            if star:
                kwonly.append(arg)
                kw_defaults.append(default)
            else:
                args.append(arg)
                if default is not None:
                    defaults.append(default)
                elif defaults:
                    raise self._error(child, "parameter without a default follows parameter with a default")
        if star and vararg is None and not kwonly:
            raise self._error(node, "named arguments must follow bare *")
        fields = {"posonlyargs": posonly, "args": args, "vararg": vararg, "kwonlyargs": kwonly,
                  "kw_defaults": kw_defaults, "kwarg": kwarg, "defaults": defaults}
        return _mk_bare(ast.arguments, fields)

    # -- targets --------------------------------------------------------------------------

    def _target(self, node: Node, ctx: ast.expr_context) -> ast.expr:
        value = self.expr(node)
        stack = [value]
        while stack:
            item = stack.pop()
            cls = type(item)
            if cls is ast.Name or cls is ast.Attribute or cls is ast.Subscript:
                item.ctx = ctx
            elif cls is ast.Tuple or cls is ast.List:
                item.ctx = ctx
                stack.extend(item.elts)
            elif cls is ast.Starred and ctx is not _DEL:
                item.ctx = ctx
                stack.append(item.value)
            else:
                verb = "delete" if ctx is _DEL else "assign to"
                raise self._error(node, f"cannot {verb} {cls.__name__}")
        return value

    # -- expressions ----------------------------------------------------------------------

    def expr(self, node: Node) -> Any:
        return self._expr_handlers[node.type](node)

    def _refuse(self, node: Node) -> Any:
        """The handler of node types that are no expression (``as`` outside ``with``...)."""
        raise self._unsupported(node)

    def _token(self, node: Node) -> str:
        """The node's source text (from the original source, before any repair)."""
        return self._source[node.start_byte:node.end_byte].decode()

    def _identifier(self, node: Node) -> str:
        text = self._source[node.start_byte:node.end_byte].decode()
        return text if text.isascii() else unicodedata.normalize("NFKC", text)

    def _name(self, node: Node) -> ast.expr:
        text = self._source[node.start_byte:node.end_byte].decode()
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        start = node.start_point
        end = node.end_point
        result = _new(ast.Name)
        result.__dict__ = {"id": text, "ctx": _LOAD, "lineno": start[0] + 1, "col_offset": start[1],
                           "end_lineno": end[0] + 1, "end_col_offset": end[1]}
        return result

    def _true(self, node: Node) -> ast.expr:
        return _at(ast.Constant, {"value": True, "kind": None}, node)

    def _false(self, node: Node) -> ast.expr:
        return _at(ast.Constant, {"value": False, "kind": None}, node)

    def _none(self, node: Node) -> ast.expr:
        return _at(ast.Constant, {"value": None, "kind": None}, node)

    def _ellipsis(self, node: Node) -> ast.expr:
        return _at(ast.Constant, {"value": ..., "kind": None}, node)

    def _number(self, node: Node) -> ast.expr:
        text = self._token(node)
        try:
            value = _number_value(text)
        except ValueError as error:
            raise self._error(node, f"invalid number literal {text!r} ({error})") from None
        return _at(ast.Constant, {"value": value, "kind": None}, node)

    def _binary(self, node: Node) -> ast.expr:
        """A run of binary operators, rebuilt with Python's precedence.

        tree-sitter-python 0.25 ranks ``^`` above ``&`` (Python ranks ``&`` higher) and nests the
        ``|`` of annotations (``union_type``) either way, so the run's operands and operators are
        read in order (iteratively: ``a+a+...`` may be long) and the tree is built again by
        operator precedence.
        """
        operands: list[Node] = []
        operators: list[str] = []
        stack: list[Any] = [node]
        while stack:
            item = stack.pop()
            if type(item) is str:
                operators.append(item)
                continue
            kind = item.type
            if kind == "binary_operator" or kind == "union_type":
                kids = item.children
                if len(kids) != 3:
                    kids = _kids(item)
                stack.append(kids[2])
                stack.append(kids[1].type)
                stack.append(kids[0])
            elif kind == "type" and item.named_child_count == 1 and item.named_children[0].type in _RUNS:
                stack.append(item.named_children[0])
            else:
                operands.append(item)
        values = [self.expr(operand) for operand in operands]
        starts = [operand.start_point for operand in operands]
        ends = [operand.end_point for operand in operands]
        star = None
        if type(values[0]) is ast.Starred and operands[0].type != "parenthesized_expression":
            star = values[0]
            values[0] = star.value
            starts[0] = (star.value.lineno - 1, star.value.col_offset)
        out_values = [values[0]]
        out_starts = [starts[0]]
        pending: list[str] = []
        precedence = _PRECEDENCE

        def reduce() -> None:
            right = out_values.pop()
            out_starts.pop()
            begin = out_starts[-1]
            end = right_ends.pop()
            right_ends[-1] = end
            fields = {"left": out_values[-1], "op": _BINOPS[pending.pop()], "right": right}
            out_values[-1] = _mk(ast.BinOp, fields, (begin[0] + 1, begin[1], end[0] + 1, end[1]))

        right_ends = [ends[0]]
        for index, operator in enumerate(operators, 1):
            rank = precedence[operator]
            while pending and (precedence[pending[-1]] > rank or (precedence[pending[-1]] == rank and operator != "**")):
                reduce()
            pending.append(operator)
            out_values.append(values[index])
            out_starts.append(starts[index])
            right_ends.append(ends[index])
        while pending:
            reduce()
        result = out_values[0]
        if star is not None:
            star.value = result
            star.end_lineno, star.end_col_offset = result.end_lineno, result.end_col_offset
            return star
        return result

    def _unary(self, node: Node) -> ast.expr:
        chain = []
        while node.type in _UNARY:
            chain.append(node)
            node = node.children[-1]
        value = self.expr(node)
        for op_node in reversed(chain):
            value = _at(ast.UnaryOp, {"op": _UNARYOPS[op_node.children[0].type], "operand": value}, op_node)
        return value

    def _boolean(self, node: Node) -> ast.expr:
        operator = node.child_by_field_name("operator").type
        rights = []
        current = node
        while current.type == "boolean_operator":
            kids = _kids(current)
            if kids[1].type != operator:
                break
            rights.append(kids[2])
            current = kids[0]
        values = [self.expr(current)]
        values.extend(self.expr(right) for right in reversed(rights))
        op = ast.And() if operator == "and" else ast.Or()
        return _at(ast.BoolOp, {"op": op, "values": values}, node)

    def _comparison(self, node: Node) -> ast.expr:
        operands = []
        ops = []
        for child in _kids(node):
            if child.is_named:
                operands.append(self.expr(child))
            else:
                op = _CMPOPS.get(child.type)
                if op is None:
                    raise self._error(child, f"invalid syntax ({child.type!r} is not a Python 3 operator)")
                ops.append(op)
        fields = {"left": operands[0], "ops": ops, "comparators": operands[1:]}
        return _at(ast.Compare, fields, node)

    def _postfix(self, node: Node) -> ast.expr:
        """An attribute/call/subscript chain, iteratively; each link spans from the chain's start."""
        chain = []
        kind = node.type
        while kind in _POSTFIX:
            kids = node.children
            chain.append((node, kind, kids))
            node = kids[0]
            kind = node.type
        star = None
        if kind == "list_splat":
            star = node
            node = _kids(node)[1]
        value = self._expr_handlers[node.type](node)
        start = node.start_point
        line = start[0] + 1
        column = start[1]
        for link, kind, kids in reversed(chain):
            end = link.end_point
            pos = (line, column, end[0] + 1, end[1])
            if kind == "attribute":
                name = kids[-1]
                text = self._source[name.start_byte:name.end_byte].decode()
                if not text.isascii():
                    text = unicodedata.normalize("NFKC", text)
                value = _mk(ast.Attribute, {"value": value, "attr": text, "ctx": _LOAD}, pos)
            elif kind == "call":
                arguments = kids[-1]
                if arguments.type == "generator_expression":
                    args, keywords = [self._genexp(arguments)], []
                else:
                    args, keywords = self._arguments(arguments)
                value = _mk(ast.Call, {"func": value, "args": args, "keywords": keywords}, pos)
            else:
                fields = {"value": value, "slice": self._subscript(link), "ctx": _LOAD}
                value = _mk(ast.Subscript, fields, pos)
        if star is not None:
            return _mk(ast.Starred, {"value": value, "ctx": _LOAD}, _with_end(star, value))
        return value

    def _arguments(self, node: Node) -> tuple[list[ast.expr], list[ast.keyword]]:
        args = []
        keywords = []
        double_star = False
        for child in node.children:
            kind = child.type
            if not child.is_named or child.is_extra:
                continue
            if kind == "keyword_argument":
                kids = _kids(child)
                fields = {"arg": self._identifier(kids[0]), "value": self.expr(kids[2])}
                keywords.append(_at(ast.keyword, fields, child))
            elif kind == "dictionary_splat":
                double_star = True
                fields = {"arg": None, "value": self.expr(_kids(child)[1])}
                keywords.append(_at(ast.keyword, fields, child))
            else:
                value = self._element(child)
                if double_star:
                    raise self._error(child, "positional argument or iterable unpacking follows "
                                             "keyword argument unpacking")
                if keywords and type(value) is not ast.Starred:
                    raise self._error(child, "positional argument follows keyword argument")
                args.append(value)
        return args, keywords

    def _element(self, node: Node) -> ast.expr:
        """An element of a list, set, tuple or call: an expression or ``*expression``."""
        kind = node.type
        if kind == "list_splat":
            return self._starred(node)
        if kind == "parenthesized_list_splat" or kind == "yield":
            raise self._error(node, "invalid syntax (starred or yield expression here needs parentheses)")
        return self.expr(node)

    def _subscript(self, node: Node) -> ast.expr:
        kids = _kids(node)
        items = kids[2:-1]
        elements = [child for child in items if child.type != ","]
        values = [self._slice(child) if child.type == "slice" else self._element(child) for child in elements]
        if len(values) == 1 and len(items) == 1 and type(values[0]) is not ast.Starred:
            return values[0]
        return _mk(ast.Tuple, {"elts": values, "ctx": _LOAD}, _join(items[0], items[-1]))

    def _slice(self, node: Node) -> ast.expr:
        parts: list[Any] = [None, None, None]
        index = 0
        for child in _kids(node):
            if child.type == ":":
                index += 1
            else:
                parts[index] = self.expr(child)
        return _at(ast.Slice, {"lower": parts[0], "upper": parts[1], "step": parts[2]}, node)

    def _starred(self, node: Node) -> ast.expr:
        kids = _kids(node)
        return _at(ast.Starred, {"value": self.expr(kids[1]), "ctx": _LOAD}, node)

    def _elements(self, node: Node) -> tuple[list[ast.expr], bool]:
        """The elements between a node's brackets, and whether a comma is among them."""
        values = []
        comma = False
        for child in node.children[1:-1]:
            if child.is_extra:
                continue
            if child.is_named:
                values.append(self._element(child))
            elif child.type == ",":
                comma = True
        return values, comma

    def _list(self, node: Node) -> ast.expr:
        values, _ = self._elements(node)
        return _at(ast.List, {"elts": values, "ctx": _LOAD}, node)

    def _set(self, node: Node) -> ast.expr:
        values, _ = self._elements(node)
        return _at(ast.Set, {"elts": values}, node)

    def _tuple(self, node: Node) -> ast.expr:
        values, comma = self._elements(node)
        if len(values) == 1 and not comma:
            if type(values[0]) is ast.Starred:
                raise self._error(node, "cannot use starred expression here")
            return values[0]
        return _at(ast.Tuple, {"elts": values, "ctx": _LOAD}, node)

    def _bare_tuple(self, node: Node) -> ast.expr:
        values = [self._element(child) for child in _kids(node) if child.is_named]
        return _at(ast.Tuple, {"elts": values, "ctx": _LOAD}, node)

    def _dictionary(self, node: Node) -> ast.expr:
        keys: list[ast.expr | None] = []
        values = []
        for child in node.children:
            kind = child.type
            if kind == "pair":
                kids = _kids(child)
                keys.append(self.expr(kids[0]))
                values.append(self.expr(kids[2]))
            elif kind == "dictionary_splat":
                keys.append(None)
                values.append(self.expr(_kids(child)[1]))
        return _at(ast.Dict, {"keys": keys, "values": values}, node)

    def _generators(self, clauses: list[Node]) -> list[ast.comprehension]:
        generators: list[ast.comprehension] = []
        for clause in clauses:
            kind = clause.type
            if kind == "for_in_clause":
                kids = _kids(clause)
                is_async = kids[0].type == "async"
                index = 2 if is_async else 1
                target = self._target(kids[index], _STORE)
                iterables = kids[index + 2:]
                if len(iterables) != 1:
                    raise self._error(clause, "invalid syntax (a comprehension's iterable needs parentheses)")
                fields = {"target": target, "iter": self.expr(iterables[0]), "ifs": [], "is_async": int(is_async)}
                generators.append(_mk_bare(ast.comprehension, fields))
            elif kind == "if_clause":
                generators[-1].ifs.append(self.expr(_kids(clause)[1]))
        return generators

    def _listcomp(self, node: Node) -> ast.expr:
        kids = _kids(node)
        fields = {"elt": self._comp_element(kids[1]), "generators": self._generators(kids[2:-1])}
        return _at(ast.ListComp, fields, node)

    def _setcomp(self, node: Node) -> ast.expr:
        kids = _kids(node)
        fields = {"elt": self._comp_element(kids[1]), "generators": self._generators(kids[2:-1])}
        return _at(ast.SetComp, fields, node)

    def _genexp(self, node: Node) -> ast.expr:
        kids = _kids(node)
        fields = {"elt": self._comp_element(kids[1]), "generators": self._generators(kids[2:-1])}
        return _at(ast.GeneratorExp, fields, node)

    def _dictcomp(self, node: Node) -> ast.expr:
        kids = _kids(node)
        pair = _kids(kids[1])
        fields = {"key": self.expr(pair[0]), "value": self.expr(pair[2]), "generators": self._generators(kids[2:-1])}
        return _at(ast.DictComp, fields, node)

    def _comp_element(self, node: Node) -> ast.expr:
        if node.type == "list_splat":
            raise self._error(node, "iterable unpacking cannot be used in comprehension")
        return self.expr(node)

    def _parenthesized(self, node: Node) -> ast.expr:
        inner = _kids(node)[1]
        if inner.type == "list_splat":
            raise self._error(node, "cannot use starred expression here")
        return self.expr(inner)

    def _lambda(self, node: Node) -> ast.expr:
        params = node.child_by_field_name("parameters")
        fields = {"args": self._parameters(params), "body": self.expr(node.child_by_field_name("body"))}
        return _at(ast.Lambda, fields, node)

    def _conditional(self, node: Node) -> ast.expr:
        spine = []
        while node.type == "conditional_expression":
            kids = _kids(node)
            spine.append((node, kids))
            node = kids[4]
        value = self.expr(node)
        for owner, kids in reversed(spine):
            fields = {"test": self.expr(kids[2]), "body": self.expr(kids[0]), "orelse": value}
            value = _at(ast.IfExp, fields, owner)
        return value

    def _named(self, node: Node) -> ast.expr:
        kids = _kids(node)
        target = _at(ast.Name, {"id": self._identifier(kids[0]), "ctx": _STORE}, kids[0])
        return _at(ast.NamedExpr, {"target": target, "value": self.expr(kids[2])}, node)

    def _await(self, node: Node) -> ast.expr:
        return _at(ast.Await, {"value": self.expr(_kids(node)[1])}, node)

    def _yield(self, node: Node) -> ast.expr:
        kids = _kids(node)
        if len(kids) > 2 and kids[1].type == "from":
            return _at(ast.YieldFrom, {"value": self.expr(kids[2])}, node)
        value = self.expr(kids[1]) if len(kids) > 1 else None
        return _at(ast.Yield, {"value": value}, node)

    # -- type expressions (annotations and aliases, as tree-sitter's "type" rule sees them) --

    def _type(self, node: Node) -> ast.expr:
        kids = _kids(node)
        if len(kids) != 1:
            raise self._error(node, "invalid syntax (type)")
        inner = kids[0]
        if inner.type == "constrained_type":
            raise self._error(inner, "invalid syntax (':' in an annotation)")
        return self.expr(inner)

    def _generic_type(self, node: Node) -> ast.expr:
        name, params = _kids(node)
        items = _kids(params)[1:-1]
        elements = [child for child in items if child.type != ","]
        values = [self._element(child) for child in elements]
        if len(values) == 1 and len(items) == 1 and type(values[0]) is not ast.Starred:
            slice_ = values[0]
        else:
            slice_ = _mk(ast.Tuple, {"elts": values, "ctx": _LOAD}, _join(items[0], items[-1]))
        return _at(ast.Subscript, {"value": self._name(name), "slice": slice_, "ctx": _LOAD}, node)

    def _member_type(self, node: Node) -> ast.expr:
        kids = _kids(node)
        fields = {"value": self.expr(kids[0]), "attr": self._identifier(kids[2]), "ctx": _LOAD}
        return _at(ast.Attribute, fields, node)

    def _splat_type(self, node: Node) -> ast.expr:
        star, name = _kids(node)
        if star.type != "*":
            raise self._error(node, "invalid syntax ('**' in an annotation)")
        return _at(ast.Starred, {"value": self._name(name), "ctx": _LOAD}, node)

    # -- strings --------------------------------------------------------------------------

    def _strings(self, node: Node) -> ast.expr:
        """A string literal or an implicit concatenation, as CPython's parser folds them.

        The text between a string's quotes is read from the source, not from tree-sitter's
        ``string_content`` nodes (which a raw string's trailing backslashes can escape into
        ``string_end``); the literal parts of an f-string are the gaps between its fields.
        """
        strings = [node] if node.type == "string" else [child for child in node.children if child.type == "string"]
        if len(strings) == 1:
            kids = node.children
            head = self._token(kids[0])
            if "f" not in head and "t" not in head and "F" not in head and "T" not in head:
                return self._plain_string(node, kids[0], head)
        # The general case, after CPython's _PyPegen_concatenate_strings.
        pieces: list[Any] = []
        has_fstring = has_bytes = has_str = has_template = False
        for string in strings:
            kids = string.children
            head = self._token(kids[0])
            prefix = head.rstrip("'\"").lower()
            if "t" in prefix:
                has_template = has_fstring = True
                pieces.extend(self._fstring_pieces(string, kids, head, template=True))
            elif "f" in prefix:
                has_str = has_fstring = True
                pieces.extend(self._fstring_pieces(string, kids, head, template=False))
            else:
                constant = self._plain_string(string, kids[0], head)
                if type(constant.value) is bytes:
                    has_bytes = True
                else:
                    has_str = True
                pieces.append(constant)
        if has_bytes and (has_str or has_template):
            raise self._error(node, "cannot mix bytes and nonbytes literals")
        if has_template and has_str:
            raise self._error(node, "cannot mix t-string literals with string or bytes literals")
        if has_bytes:
            value = b"".join(piece.value for piece in pieces)
            return _at(ast.Constant, {"value": value, "kind": pieces[0].kind}, node)
        folded = []
        index = 0
        count = len(pieces)
        while index < count:
            piece = pieces[index]
            if type(piece) is ast.Constant:
                end = index + 1
                while end < count and type(pieces[end]) is ast.Constant:
                    end += 1
                if end - index > 1:
                    value = "".join(part.value for part in pieces[index:end])
                    piece = _mk(ast.Constant, {"value": value, "kind": piece.kind}, _from_to(piece, pieces[end - 1]))
                index = end
                if has_fstring and not piece.value:
                    continue
            else:
                index += 1
            folded.append(piece)
        if not has_fstring:
            return folded[0]
        return _at(TemplateStr if has_template else ast.JoinedStr, {"values": folded}, node)

    def _string_head(self, node: Node, head: str) -> tuple[str, int]:
        """The lower-case prefix of a string and the length of its quotes; checks both."""
        quote = 3 if head.endswith(('"""', "'''")) else 1
        prefix = head[:-quote].lower()
        if prefix not in _STRING_PREFIXES or not head.endswith(("'", '"')):
            raise self._error(node, f"invalid string prefix or quote {head!r}")
        return prefix, quote

    def _plain_string(self, node: Node, start: Node, head: str) -> ast.expr:
        prefix, quote = self._string_head(node, head)
        text = self._source[start.end_byte:node.end_byte - quote].decode()
        if "b" in prefix:
            value: Any = self._decode_bytes(node, text, "r" in prefix)
        elif "r" in prefix or "\\" not in text:
            value = text
        else:
            value = self._decode_str(node, text, _ESCAPE)
        return _at(ast.Constant, {"value": value, "kind": "u" if prefix == "u" else None}, node)

    def _decode_str(self, node: Node, text: str, pattern: re.Pattern[str]) -> str:
        """Decodes the escapes of a str literal (and ``{{``/``}}`` with ``_FSTRING_ESCAPE``)."""
        def replace(match: re.Match[str]) -> str:
            escape = match.group(1)
            if escape is None:
                return match.group(0)[0]
            simple = _SIMPLE_ESCAPES.get(escape)
            if simple is not None:
                return simple
            head = escape[0]
            if head in "01234567":
                return chr(int(escape, 8))
            if head in "xuU" and len(escape) > 1:
                code = int(escape[1:], 16)
                if code > 0x10FFFF:
                    raise self._error(node, f"(unicode error) illegal Unicode character \\{escape}")
                return chr(code)
            if head in "xuU":
                raise self._error(node, f"(unicode error) truncated \\{head} escape")
            if head == "N":
                if len(escape) < 3:
                    raise self._error(node, "(unicode error) malformed \\N character escape")
                try:
                    char = unicodedata.lookup(escape[2:-1])
                except KeyError:
                    raise self._error(node, f"(unicode error) unknown Unicode character name {escape[2:-1]!r}") from None
                if len(char) != 1:
                    raise self._error(node, f"(unicode error) {escape[2:-1]!r} is a named sequence")
                return char
            return "\\" + escape

        return pattern.sub(replace, text)

    def _decode_bytes(self, node: Node, text: str, raw: bool) -> bytes:
        if not text.isascii():
            raise self._error(node, "bytes can only contain ASCII literal characters")
        if raw or "\\" not in text:
            return text.encode("ascii")

        def replace(match: re.Match[str]) -> str:
            escape = match.group(1)
            simple = _SIMPLE_ESCAPES.get(escape)
            if simple is not None:
                return simple
            head = escape[0]
            if head in "01234567":
                return chr(int(escape, 8) & 0xFF)
            if head == "x":
                if len(escape) == 1:
                    raise self._error(node, "(value error) invalid \\x escape")
                return chr(int(escape[1:], 16))
            return "\\" + escape

        return _ESCAPE.sub(replace, text).encode("latin-1")

    def _literal(self, owner: Node, start: int, stop: int, begin: Any, end: Any, raw: bool) -> ast.expr | None:
        """The Constant for the literal text between two byte offsets of an f-string, if any."""
        if start >= stop:
            return None
        text = self._source[start:stop].decode()
        if raw:
            text = text.replace("{{", "{").replace("}}", "}")
        elif "\\" in text or "{" in text or "}" in text:
            text = self._decode_str(owner, text, _FSTRING_ESCAPE)
        return _mk(ast.Constant, {"value": text, "kind": None}, (begin[0] + 1, begin[1], end[0] + 1, end[1]))

    def _fstring_pieces(self, node: Node, kids: list[Node], head: str, template: bool) -> list[Any]:
        """An f-string's (or t-string's) parts: Constants for the gaps, then the fields."""
        prefix, quote = self._string_head(node, head)
        if "b" in prefix:
            raise self._error(node, f"invalid string prefix {prefix!r}")
        raw = "r" in prefix
        pieces = []
        previous = kids[0]
        for child in kids:
            if child.type == "interpolation":
                literal = self._literal(node, previous.end_byte, child.start_byte, previous.end_point,
                                        child.start_point, raw)
                if literal is not None:
                    pieces.append(literal)
                pieces.extend(self._interpolation(child, template, raw))
                previous = child
        end = node.end_point
        literal = self._literal(node, previous.end_byte, node.end_byte - quote, previous.end_point,
                                (end[0], end[1] - quote), raw)
        if literal is not None:
            pieces.append(literal)
        return pieces

    def _interpolation(self, node: Node, template: bool, raw: bool) -> list[Any]:
        """A replacement field: [FormattedValue] or, with ``=``, [Constant, FormattedValue]."""
        kids = _kids(node)
        expression = kids[1]
        if expression.type == "named_expression":
            return self._walrus_lookalike(node, kids, template, raw)
        value = self._fstring_expression(expression)
        index = 2
        debug = kids[index].type == "="
        if debug:
            index += 1
        after_expression = kids[index]
        conversion = -1
        if after_expression.type == "type_conversion":
            letter = self._token(after_expression)[1:]
            if letter not in ("s", "r", "a"):
                raise self._error(after_expression, f"f-string: invalid conversion character {letter!r}: "
                                                    "expected 's', 'r', or 'a'")
            conversion = ord(letter)
            index += 1
        spec = None
        if kids[index].type == "format_specifier":
            spec = self._format_spec(kids[index], raw)
            index += 1
        if debug and conversion == -1 and spec is None:
            conversion = ord("r")
        pieces = []
        if debug:
            text = self._expression_text(node, kids[0].end_byte, after_expression.start_byte)
            start = kids[0].end_point
            end = after_expression.start_point
            pos = (start[0] + 1, start[1], end[0] + 1, end[1])
            pieces.append(_mk(ast.Constant, {"value": text, "kind": None}, pos))
        if template:
            stop = kids[2] if debug else after_expression
            text = self._expression_text(node, kids[0].end_byte, stop.start_byte).rstrip(" \t\n\r\f\v")
            fields = {"value": value, "str": text, "conversion": conversion, "format_spec": spec}
            pieces.append(_at(Interpolation, fields, node))
        else:
            fields = {"value": value, "conversion": conversion, "format_spec": spec}
            pieces.append(_at(ast.FormattedValue, fields, node))
        return pieces

    def _walrus_lookalike(self, node: Node, kids: list[Node], template: bool, raw: bool) -> list[Any]:
        """``{x:=10}`` in an f-string: ``x`` formatted with the spec ``=10`` (not a walrus)."""
        name, walrus = _kids(kids[1])[:2]
        close = kids[-1]
        if len(kids) != 3 or b"{" in self._source[walrus.start_byte:close.start_byte]:
            raise self._error(node, "f-string: this format spec starting with '=' is not supported")
        colon = walrus.start_point
        after = (colon[0], colon[1] + 1)
        literal = self._literal(node, walrus.start_byte + 1, close.start_byte, after, close.start_point, raw)
        begin = close.start_point
        spec = _mk(ast.JoinedStr, {"values": [literal] if literal is not None else []},
                   (colon[0] + 1, colon[1], begin[0] + 1, begin[1]))
        fields: dict[str, Any] = {"value": self._name(name), "conversion": -1, "format_spec": spec}
        if template:
            fields["str"] = self._expression_text(node, kids[0].end_byte, walrus.start_byte).rstrip(" \t\n\r\f\v")
            return [_at(Interpolation, fields, node)]
        return [_at(ast.FormattedValue, fields, node)]

    def _expression_text(self, node: Node, start: int, stop: int) -> str:
        """The source between byte offsets ``start`` and ``stop`` of a replacement field, without
        comments (as CPython 3.14 keeps a debug text or an Interpolation's ``str``)."""
        raw = self._source[start:stop]
        if b"#" not in raw:
            return raw.decode()
        comments = []
        stack = [node]
        while stack:
            current = stack.pop()
            for child in current.children:
                if child.type == "comment":
                    if start <= child.start_byte < stop:
                        comments.append((child.start_byte, child.end_byte))
                elif child.child_count:
                    stack.append(child)
        parts = []
        offset = start
        for begin, end in sorted(comments):
            parts.append(self._source[offset:begin])
            offset = end
        parts.append(self._source[offset:stop])
        return b"".join(parts).decode()

    def _fstring_expression(self, node: Node) -> ast.expr:
        if node.type in ("expression_list", "pattern_list"):
            return self._bare_tuple(node)
        if node.type == "list_splat":
            raise self._error(node, "f-string: cannot use starred expression here")
        return self.expr(node)

    def _format_spec(self, node: Node, raw: bool) -> ast.expr:
        """A format spec: its literal text is what lies between the nested fields."""
        values = []
        kids = _kids(node)
        previous = kids[0]
        for child in kids[1:]:
            literal = self._literal(node, previous.end_byte, child.start_byte, previous.end_point,
                                    child.start_point, raw)
            if literal is not None:
                values.append(literal)
            values.extend(self._interpolation(child, False, raw))
            previous = child
        literal = self._literal(node, previous.end_byte, node.end_byte, previous.end_point, node.end_point, raw)
        if literal is not None:
            values.append(literal)
        return _at(ast.JoinedStr, {"values": values}, node)


class _Handlers(dict):  # type: ignore[type-arg]
    """Node type -> handler; an unknown type gets ``default`` (which refuses the node)."""

    def __init__(self, default: Callable[[Node], Any], handlers: dict[str, Callable[[Node], Any]]) -> None:
        super().__init__(handlers)
        self._default = default

    def __missing__(self, key: str) -> Callable[[Node], Any]:
        return self._default


def _split(nodes: list[Node], separator: str) -> list[list[Node]]:
    """Groups ``nodes`` between ``separator`` tokens (a trailing separator makes no group)."""
    groups: list[list[Node]] = [[]]
    for node in nodes:
        if node.type == separator:
            groups.append([])
        else:
            groups[-1].append(node)
    if not groups[-1]:
        groups.pop()
    return groups


def _last_block(node: Node) -> Node | None:
    for child in reversed(node.children):
        if child.type == "block":
            return child
    return None


def _number_value(text: str) -> int | float | complex:
    """The value of a number token, as CPython reads it.

    Raises:
        ValueError: not a Python 3 number (``1L``, ``0777``, misplaced ``_``, too many digits).
    """
    last = text[-1]
    if last in "jJ":
        return complex(0.0, float(text[:-1]))
    if last in "lL":
        raise ValueError("Python 2 long integer suffix")
    head = text[:2].lower()
    if head in ("0x", "0o", "0b"):
        return int(text, 0)
    if "." in text or "e" in text or "E" in text:
        return float(text)
    return int(text, 0)
