"""Python's ways of naming code at run time, followed by the abstract interpreter
(``interp.Frame``): ``__import__``/``importlib.import_module`` of a constant name,
``getattr`` with a name that folds to a constant, ``functools.partial`` objects,
``staticmethod(f)``, ``vars(module)`` and the items of ``sys.modules`` and ``module.__dict__``.

A hostile repository hides a sink from a scanner that reads only ``import`` statements and
attribute syntax this way (``getattr(__import__("o" + "s"), "sys" + "tem")(cmd)``); each form
resolves to the library name it stands for, and anything the engine cannot fold stays an
ordinary call.
"""

from __future__ import annotations

import ast

from .values import Value, constant, join

# Functions that import a module by its name and return it: "top" returns the top-level package
# unless a fromlist is given (``__import__``), "named" the module named (``import_module``).
_IMPORTERS = {"__import__": "top", "builtins.__import__": "top", "importlib.__import__": "top",
              "importlib.import_module": "named"}
_IMPORTER_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in _IMPORTERS)


class RuntimeNames:
    """Run-time naming, mixed into ``interp.Frame``."""

    def dynamic_import(self, node: ast.Call) -> Value | None:
        """The module a dynamic import of a constant name returns, as ``import`` binds it, or
        None when ``node`` is not one.

        Python's semantics (the ``importlib`` documentation): ``__import__("a.b")`` returns the
        top-level package ``a`` unless a non-empty ``fromlist`` is given (a constant or a list, tuple
        or set display), then ``a.b``;
        ``importlib.import_module("a.b")`` returns ``a.b``. A relative name, a name that is not
        a constant, or an unknown ``fromlist`` gives None (the call is then an ordinary call).
        """
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if called not in _IMPORTER_NAMES or not node.args:
            return None
        refs = {t[1:] for t in self.expr(func).types if t.startswith("=")}
        kinds = {_IMPORTERS[r] for r in refs if r in _IMPORTERS}
        if len(kinds) != 1:
            return None
        name = self.expr(node.args[0])
        if not (name.is_const and isinstance(name.const, str) and all(p.isidentifier() for p in name.const.split("."))):
            return None
        qualified = name.const
        if kinds == {"top"}:
            fromlist = node.args[3] if len(node.args) > 3 else next(
                (k.value for k in node.keywords if k.arg == "fromlist"), None)
            if isinstance(fromlist, (ast.List, ast.Tuple, ast.Set)) and not any(
                    isinstance(e, ast.Starred) for e in fromlist.elts):
                chosen = bool(fromlist.elts)  # a literal list: only whether it is empty matters
            else:
                wanted = self.expr(fromlist) if fromlist is not None else constant(None)
                if not wanted.is_const:
                    return None
                chosen = bool(wanted.const)
            qualified = qualified if chosen else qualified.split(".")[0]
        return self.library_name(qualified, node)

    def getattr_call(self, node: ast.expr) -> ast.Attribute | None:
        """``getattr(obj, name)`` or ``getattr(obj, name, default)`` (Python's semantics) as the
        attribute it reads, when ``name`` folds to a constant identifier (``"sys" + "tem"``, a
        variable holding ``"system"``), else None. A default is ignored: the attribute is what
        the call reads whenever the object has it."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) in (2, 3) and not node.keywords):
            return None
        name = node.args[1]
        attr = name.value if isinstance(name, ast.Constant) else self.expr(name).const
        if not (isinstance(attr, str) and attr.isidentifier()) or "=getattr" not in self.expr(node.func).types:
            return None
        return ast.copy_location(ast.Attribute(value=node.args[0], attr=attr, ctx=ast.Load()), node)

    def partial_object(self, node: ast.Call) -> Value | None:
        """``functools.partial(f, *args, **keywords)`` as a value that stands for it (kept in
        ``program.partials`` under where it was made), or None when ``node`` is not such a call
        or unpacks ``*``/``**`` into it. Calling the value calls ``f`` with ``args`` first, then
        the call's own, and the keywords merged, the call's own winning (Python's semantics,
        the ``functools`` documentation): ``Calls.call_partial``."""
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if (called != "partial" or not node.args or any(isinstance(a, ast.Starred) for a in node.args)
                or any(k.arg is None for k in node.keywords) or "=functools.partial" not in self.expr(func).types):
            return None
        site = self.site(node)
        key = f"{site.path}:{site.line}:{site.col}"
        self.program.partials[key] = (self.expr(node.args[0]), node.args[0], [self.expr(a) for a in node.args[1:]],
                                      {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None})
        return Value(types=frozenset({"partial:" + key}))

    def method_wrapper(self, node: ast.Call) -> Value | None:
        """``staticmethod(f)`` (Python's semantics: read through a class or an instance, it is
        ``f`` itself) as ``f``'s value, or None when ``node`` is not such a call."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "staticmethod" and len(node.args) == 1
                and not node.keywords and "=staticmethod" in self.expr(node.func).types):
            return None
        return self.expr(node.args[0])

    def namespace_of(self, node: ast.Call) -> Value | None:
        """``vars(module)`` (Python's semantics: the module's ``__dict__``) as a reference to
        that namespace, or None when ``node`` is not such a call."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "vars" and len(node.args) == 1
                and not node.keywords and "=vars" in self.expr(node.func).types):
            return None
        refs = sorted(t[1:] for t in self.expr(node.args[0]).types if t.startswith("="))
        return Value(types=frozenset("=" + r + ".__dict__" for r in refs)) if refs else None

    def namespace_item(self, owner: Value, key: str, node: ast.AST) -> Value | None:
        """An item of a namespace read by a constant name, as the name itself:
        ``sys.modules["os"]`` is the module ``os``, ``os.__dict__["system"]`` (or
        ``vars(os)["system"]``) is ``os.system``. None when ``owner`` is no such namespace."""
        if not all(part.isidentifier() for part in key.split(".")):
            return None
        named = []
        for qualified in sorted(t[1:] for t in owner.types if t.startswith("=")):
            if qualified == "sys.modules":
                named.append(self.library_name(key, node))
            elif qualified.endswith(".__dict__") and key.isidentifier():
                named.append(self.library_name(qualified[:-len(".__dict__")] + "." + key, node))
        return join(*named) if named else None
