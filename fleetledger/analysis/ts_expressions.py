"""Converting expressions: names and literals, operator runs (rebuilt, since the grammar ranks
``^`` above ``&``), comparisons, attribute/call/subscript chains, containers, comprehensions,
lambdas and the rest, iteratively along the chains real code makes long. Part of the
tree-sitter converter (``tsconvert._Converter``).
"""

from __future__ import annotations

import ast
import unicodedata
from typing import Any

from tree_sitter import Node

from .ts_nodes import _LOAD, _STORE, _at, _join, _kids, _mk, _mk_bare, _new, _with_end

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
_POSTFIX = frozenset(["attribute", "call", "subscript"])
_UNARY = frozenset(["unary_operator", "not_operator"])
_RUNS = frozenset(["binary_operator", "union_type"])


class _Expressions:
    """Expression conversion, mixed into ``tsconvert._Converter``."""

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
