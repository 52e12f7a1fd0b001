"""What a call does to the object it is made on, in the abstract interpreter (``interp.Frame``):
a list built here keeps its items by position through ``append``, ``insert``, ``extend`` and
``pop``; a keyed library container (``[[container]]``) keeps values apart per constant key; a
method the models say reconfigures its object (``[[reconfigure]]``) retypes the variable naming
it; a method the models do not describe may keep its arguments in its receiver.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from . import callbacks
from .facts import Site, step
from .library_methods import library_types
from .sequences import leading_items, with_rest
from .values import Value, add_step, bounded, constant, join, labels_of, taint_only, with_items, without_parameters

SHIFTING_METHODS = frozenset({"pop", "insert", "remove", "sort", "reverse"})
"""List methods after which an item is no longer at the index it was stored under."""
LIST_METHODS = frozenset({"append", "extend", "insert", "pop"})
"""List methods followed item by item on a list whose items are known by position."""
MAX_LIST_ITEMS = 256
"""Items a list built here is followed by position up to (each move copies them); a longer
one keeps the taint of all its items."""


class Objects:
    """Calls' effects on their receivers, mixed into ``interp.Frame``."""

    def list_method(self, node: ast.Call, name: str, method: str) -> Value | None:
        """``xs.append(v)``, ``xs.extend(ys)``, ``xs.insert(i, v)`` and ``xs.pop(i)`` (``i`` a
        literal) on a list whose items are known by position (keys ``0..n-1``): the items move
        as Python moves them, so ``xs[1]`` after ``xs.pop(0)`` is what was stored third.

        Returns:
            The call's value (``None`` for the mutators, the removed item for ``pop``), or None
            when the call is not one of these on such a list (the general rules apply then).
        """
        def positional(owner: Value | None) -> bool:
            return (owner is not None and owner.items is not None and len(owner.items) < MAX_LIST_ITEMS
                    and list(owner.items) == list(range(len(owner.items))))

        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            return None
        current = self.env.get(name)
        leading = leading_items(current) if current is not None else None
        if leading is not None and leading[1] is not None and method in ("append", "extend", "insert"):
            # A list whose first items are known and the rest not: what is added joins the rest
            # (an insert among the known items moves them: then none is known by position).
            argument = self.expr(node.args[-1])
            index = _literal_int(node.args[0]) if method == "insert" and len(node.args) == 2 else None
            known, rest = leading
            if method == "insert" and index is not None and 0 <= index <= len(known):
                # before the rest (``xs.insert(2, "--")`` after two known items) or among the
                # known items: they move up one place
                self.rebind(name, current, with_rest([*known[:index], argument, *known[index:]], rest))
                return constant(None)
            if method == "insert":
                known, rest = [], join(*known, rest)  # type: ignore[arg-type]
            added = argument.flatten() if method == "extend" else argument
            self.rebind(name, current, with_rest(known, join(rest, added)))  # type: ignore[arg-type]
            return constant(None)
        if not positional(current):
            return None
        shape = {"append": (1,), "extend": (1,), "insert": (2,), "pop": (0, 1)}[method]
        if len(node.args) not in shape:
            return None
        index = None
        if method in ("insert", "pop") and node.args:
            index = _literal_int(node.args[0])
            if index is None:
                return None
        # The argument first (it may move this very list: ``xs.append(xs.pop(0))``), then the
        # list as it is after that.
        argument = self.expr(node.args[-1]) if method in ("append", "insert", "extend") else None
        owner = self.env.get(name)
        if not positional(owner):
            if argument is not None and owner is not None:
                self.rebind(name, owner, join(owner.flatten(), taint_only(argument.flatten())))
            return constant(None) if argument is not None else None
        assert owner is not None and owner.items is not None
        items = list(owner.items.values())
        result: Value = constant(None)
        if method == "append":
            items.append(bounded(argument))  # type: ignore[arg-type]
        elif method == "insert":
            items.insert(index, bounded(argument))  # type: ignore[arg-type]
        elif method == "pop":
            at = len(items) - 1 if index is None else index
            if not -len(items) <= at < len(items):
                return None
            result = items.pop(at)
            if owner.labels:
                result = join(result, Value(labels=owner.labels))
        else:
            added = argument
            assert added is not None
            spliced = leading_items(added) if not owner.labels and not owner.types else None
            if spliced is None and (owner.labels or owner.types):
                self.rebind(name, owner, join(owner.flatten(), taint_only(added.flatten())))
                return result
            if spliced is None:
                self.rebind(name, owner, with_rest(items, taint_only(added.flatten())))
                return result
            if spliced[1] is not None:
                self.rebind(name, owner, with_rest([*items, *spliced[0]], spliced[1]))
                return result
            items.extend(bounded(item) for item in spliced[0])
        self.rebind(name, owner, Value(labels=owner.labels, types=owner.types, items=dict(enumerate(items)),
                                       functions=owner.functions))
        return result

    def rebind(self, name: str, old: Value, new: Value) -> None:
        """Gives ``name`` a list's new value after a change in place, and every other variable
        naming the same list (``alias = xs`` before ``xs.append(v)``: one object, two names)."""
        for other, value in list(self.env.items()):
            if value is old and other != name:
                self.env[other] = new
        self.env[name] = new

    def reconfigure(self, node: ast.Call, models: tuple[tuple[str, Any, bool], ...], args: list[Value],
                    kwargs: dict[str, Value]) -> None:
        """Gives the variable naming a method's receiver the types ``[[reconfigure]]`` models
        say the call turns it into (a parser told to resolve external entities), or takes them
        away (``removes``: told not to)."""
        if not models or not self.follows_receiver(node):
            return  # an object the engine does not follow: ``[[check]] untracked`` reports it
        name = node.func.value.id  # type: ignore[attr-defined]
        types = self.env[name].types
        for type_name, when, removes in models:
            holds = True if when is None else self.holds(when, args, kwargs)
            if removes and holds is True:
                types = types - {type_name}
            elif not removes and holds is not False:  # turned on, or maybe (a flag not known)
                types = types | {type_name}
        self.env[name] = replace(self.env[name], types=types)

    def follows_receiver(self, node: ast.Call) -> bool:
        """True when a method call's receiver is a local variable the engine follows (not a
        parameter, whose object is the caller's, nor an attribute or another expression)."""
        target = node.func.value if isinstance(node.func, ast.Attribute) else None
        params = {param.arg for param in self.function.params} if self.function is not None else set()
        return isinstance(target, ast.Name) and target.id in self.env and target.id not in params

    def container_method(self, target: ast.expr, owner: Value, method: str, args: list[Value]) -> Value | None:
        """A store or load method of a keyed library container (``[[container]]``): with a
        constant key, the value is kept (or read) under that key of the variable naming the
        container, so ``conf.get("s", "a")`` is not what ``conf.set("s", "b", x)`` stored.

        Returns:
            The call's value, or None when ``method`` is not a store or load of ``owner``'s type
            or loads a key not stored here (the general rules apply then).
        """
        model = next((self.catalog.containers[base] for t in sorted(owner.types) for base in self.program.class_mro(t)
                      if base in self.catalog.containers), None)
        if model is None or method not in model.store | model.load or len(args) < model.key_args:
            return None
        keys = args[:model.key_args]
        key = "\x1f".join(str(k.const) for k in keys) if all(k.is_const for k in keys) else None
        name = target.id if isinstance(target, ast.Name) and target.id in self.env else None
        if method in model.store:
            if len(args) <= model.key_args or name is None:
                return None  # kept nowhere the engine names: the general rules apply
            stored = args[-1]
            self.env[name] = with_items(owner, {key: stored}) if key is not None else join(owner, taint_only(stored.flatten()))
            return constant(None)
        # A key stored here gives its value; any other read is what the general rules say
        # (the container may hold what it read from a file). A stored text that names other
        # keys (``"%(a)s"``, ``"${a}"``: configparser's interpolation) may be any of them.
        known = owner.get(key) if key is not None else None
        if known is not None and known.is_const and isinstance(known.const, str) and ("%(" in known.const or "${" in known.const):
            return taint_only(owner.flatten())
        return known

    def forget_positions(self, target: ast.expr) -> None:
        """A list built here whose items move (``pop``, ``insert``, ``remove``, ``sort``,
        ``reverse``, ``del xs[i]``) no longer has known values per index: a variable naming it
        keeps the taint of all its items. Keys of other kinds (a dict's) do not move."""
        if not isinstance(target, ast.Name):
            return
        value = self.env.get(target.id)
        if value is not None and value.items and any(isinstance(key, int) for key in value.items):
            self.env[target.id] = value.flatten()

    def stores_into(self, target: ast.expr | None, inputs: list[Value], site: Site, method: str | None = None) -> None:
        """A method the models do not describe may keep its arguments in its receiver
        (``items.append(x)``, ``d.setdefault(k, x)``, ``buffer.write(x)``): a variable named as
        the receiver then carries their taint too (a global's value everywhere after). Not where
        ``obj.method`` is a callback its constructor stored (``callbacks.stored_callback``), which
        Python calls without the object."""
        if not isinstance(target, ast.Name) or not any(value.tainted() for value in inputs):
            return
        name = target.id
        held = self.env.get(name, self.module.globals.get(name))
        if held is not None and held.types and all(t.startswith("=") for t in held.types):
            return  # a module, or a library function or class: not a container (``shlex.split(x)``)
        if held is not None and method and callbacks.stored_callback(self.program, held, method):
            return
        carried = add_step(join(*(taint_only(value.flatten()) for value in inputs)), step(site, f"stored in {target.id}"))
        if held is not None and library_types(held.types):
            # An object of a library type stays of that type: a value of unknown origin kept in
            # it (``parser.set_element_class_lookup(lookup)``) is no data that makes it unknown.
            carried = Value(labels=labels_of(label for label in carried.all_labels() if label.channel != "opaque"))
            if not carried.labels:
                return
        if name in self.env:
            self.env[name] = join(self.env[name], carried)
        elif name in self.module.globals:
            # A parameter's label means something only inside its function: a global keeps the
            # outside data, not the parameters of the function that stored it.
            self.module.globals[name] = join(self.module.globals[name], without_parameters(carried))


def _literal_int(node: ast.expr) -> int | None:
    """The value of an integer literal (``2``, ``-1``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
