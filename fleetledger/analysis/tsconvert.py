"""Python source of any version up to 3.14 -> the running interpreter's ``ast`` tree, via tree-sitter.

The scanner runs on Python 3.11 and later, whose own ``ast.parse`` refuses newer syntax:
PEP 701 f-strings (nested same quotes, backslashes and comments inside the braces), PEP 695
type parameters and ``type X = ...``, PEP 696 type parameter defaults, PEP 758 ``except A,
B:``, PEP 750 t-strings. ``convert`` parses with tree-sitter's Python grammar instead and
builds the tree CPython 3.14's ``ast.parse`` would give, with the same positions (``lineno``
1-based; ``col_offset`` and ``end_col_offset`` in UTF-8 bytes), so the analysis works on one
kind of tree whatever produced it. ``fleetledger.analysis.parser`` decides which parser runs.

Node classes the host lacks (Python 3.11 has no ``TypeAlias``, ``TypeVar``, ``ParamSpec``,
``TypeVarTuple``, ``TemplateStr`` or ``Interpolation``) are defined (in ``ts_nodes``, exported
here) with CPython 3.14's
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

This module parses, repairs and dispatches; the converter is one class, ``_Converter``,
assembled from its parts, one module each: ``ts_statements`` (statements and assignment
targets), ``ts_match`` (``match`` and patterns), ``ts_signatures`` (parameters, type parameters,
type expressions), ``ts_expressions`` (expressions) and ``ts_strings`` (strings, f-strings,
t-strings); ``ts_nodes`` holds what they all build with.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import tree_sitter_python
from tree_sitter import Language, Node, Parser

from .ts_expressions import _Expressions
from .ts_match import _Match
from .ts_nodes import (Interpolation, ParamSpec, TemplateStr, TreeSitterSyntaxError, TypeAlias, TypeVar, TypeVarTuple,
                       _Handlers, _Reparse, type_param)
from .ts_signatures import _Signatures
from .ts_statements import _Statements
from .ts_strings import _Strings

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

_LANGUAGE = Language(tree_sitter_python.language())


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


class _Converter(_Statements, _Match, _Signatures, _Expressions, _Strings):
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

    @staticmethod
    def _error(node: Node, message: str) -> TreeSitterSyntaxError:
        line = node.start_point[0] + 1
        return TreeSitterSyntaxError(f"syntax error at line {line}: {message}", lineno=line)
