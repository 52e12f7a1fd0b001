"""Converting ``match`` statements and their patterns (PEP 634): literal, capture, value,
sequence, mapping, class, ``|`` and ``as`` patterns. Part of the tree-sitter converter
(``tsconvert._Converter``).
"""

from __future__ import annotations

import ast

from tree_sitter import Node

from .ts_expressions import _BINOPS, _UNARYOPS
from .ts_nodes import _LOAD, _at, _join, _kids, _mk, _mk_bare, _split


class _Match:
    """``match`` conversion, mixed into ``tsconvert._Converter``."""

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
