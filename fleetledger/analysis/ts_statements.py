"""Converting statements: simple and compound statements, blocks (checking that their
statements line up), imports, ``try``/``with``, function and class definitions, and assignment
targets. Part of the tree-sitter converter (``tsconvert._Converter``).
"""

from __future__ import annotations

import ast

from tree_sitter import Node

from .ts_expressions import _AUGOPS
from .ts_nodes import _DEL, _LOAD, _STORE, _Reparse, _at, _join, _kids, _last_block, _mk, _mk_bare, TypeAlias


class _Statements:
    """Statement conversion, mixed into ``tsconvert._Converter``."""

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
