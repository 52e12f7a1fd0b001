"""Guards of the package's layout for the next change (issue 15): no import circle inside
``fleetledger/`` and no module over ``MAX_LINES`` lines. Each failure says what to do."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "fleetledger"
MAX_LINES = 500


def modules() -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package (the demo repository aside: it is
    data the scan reads, not code of ours)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if "demo_repo" in rel.parts:
            continue
        name = ".".join(rel.parts).removesuffix(".__init__")
        out[name] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its text (inside functions too,
    since a circle through a function-level import is still a circle), except under ``if
    TYPE_CHECKING:``; ``from P import n`` counts the submodule ``P.n`` when there is one."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - child.level + 1] + ([child.module] if child.module else []))
                else:
                    base = child.module or ""
                for alias in child.names:
                    target = f"{base}.{alias.name}"
                    found.add(target if target in known else base)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in known and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_inside_the_package() -> None:
    known = modules()
    graph = defaultdict(set, {name: imports(name, path, known) for name, path in known.items()})
    found = circles(graph)
    assert not found, (
        "import circles inside fleetledger/: " + "; ".join(" <-> ".join(c) for c in found) + ". Break each by "
        "moving what both sides need into a lower module, by passing a callable or a small interface in "
        "(as run.host.HostContext is), or by importing a name only for its type under `if TYPE_CHECKING:`")


def test_no_module_over_the_limit() -> None:
    long = sorted((len(path.read_text(encoding="utf-8").splitlines()), name) for name, path in modules().items())
    over = [f"{name} ({lines} lines)" for lines, name in long if lines > MAX_LINES]
    assert not over, (
        f"modules over {MAX_LINES} lines: {', '.join(over)}. Split each along its concepts into modules named for "
        "them (the way fleetledger/run/ splits the coordinator) before adding to it")
