"""Converting signatures: parameter lists (of functions and lambdas, checking their order),
PEP 695 type parameters with PEP 696 defaults, and type expressions as tree-sitter's ``type``
rule gives them (annotations and aliases). Part of the tree-sitter converter
(``tsconvert._Converter``).
"""

from __future__ import annotations

import ast
from typing import Any

from tree_sitter import Node

from .ts_nodes import _LOAD, _at, _join, _kids, _mk, _mk_bare, _span, ParamSpec, TypeVar, TypeVarTuple


class _Signatures:
    """Signature conversion, mixed into ``tsconvert._Converter``."""

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
