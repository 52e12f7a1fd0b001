"""CWE-22, path traversal through archive members: ``tarfile.extractall`` without a filter."""

from __future__ import annotations

import ast

from ..assessment import CERTAIN, LIKELY, Assessment, Site, from_trace
from ..sinks import keyword
from ..taint import Tracer
from ..tree import SourceTree, walk_scope

CWE = 22
_SAFE_FILTERS = frozenset({"data", "tar"})
_PATH_CHECKS = frozenset({"isabs", "abspath", "realpath", "normpath", "commonpath", "startswith",
                          "is_relative_to", "relative_to", "resolve", "issym", "islnk", "issubpath"})


def assess(site: Site) -> Assessment | None:
    """Judges ``TarFile.extractall`` (bandit B202).

    Member names such as ``../../etc/cron.d/x`` or absolute paths, and links, write outside the
    target directory unless the extraction filters them: ``filter="data"`` or ``"tar"``
    (Python 3.12, backported to 3.8.17+), or a ``members=`` list or function that checks each
    name (``os.path.isabs``, ``..``, ``realpath``/``commonpath``/``is_relative_to``). Without a
    filter, the archive's origin decides: an uploaded or downloaded archive, or one a caller
    passes, is a finding; an archive at a fixed path shipped with the application is not.

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not an ``extractall`` call.
    """
    node = site.node
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "extractall"):
        return None
    tree = site.tree
    tracer = Tracer(tree, "archive")
    chosen = keyword(node, "filter")
    if isinstance(chosen, ast.Constant) and chosen.value in _SAFE_FILTERS:
        fact = f"extractall() uses filter={chosen.value!r}, which refuses absolute paths, '..' and links leaving the target."
        return Assessment(verdict="not_vulnerable", confidence=CERTAIN, cwe=CWE, facts=(fact,),
                          signals={"sink": "archive", "source": "none", "sanitised": True})
    members = keyword(node, "members")
    if members is not None:
        check = _member_check(tree, tracer.literal(members))
        if check is not None:
            fact = f"extractall() extracts only the members {check}."
            return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=CWE, facts=(fact,),
                              signals={"sink": "archive", "source": "none", "sanitised": True})
    lead = "extractall() writes every member where its name points, with no filter."
    return from_trace(tracer.trace(node.func.value), cwe=CWE, sink="archive", value="the archive", facts=(lead,))


def _member_check(tree: SourceTree, members: ast.expr) -> str | None:
    """Describes how a ``members=`` value vets names, or returns None if it does not visibly."""
    scope: ast.AST | None = None
    if isinstance(members, ast.Call) and isinstance(members.func, ast.Name):
        scope = tree.module_function(members.func.id)
        label = f"that {members.func.id}() lets through"
    elif isinstance(members, (ast.ListComp, ast.GeneratorExp)):
        scope = members
        label = "kept by the comprehension's condition"
    else:
        return None
    if scope is None:
        return None
    nodes = list(ast.walk(scope))
    # Follow calls of functions defined in this file one level down (`if within(dest, m.name)`).
    helpers = [tree.module_function(n.func.id) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    nodes += [n for helper in helpers if helper is not None and helper is not scope for n in walk_scope(helper)]
    calls = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
             for n in nodes if isinstance(n, ast.Call)}
    dotdot = any(isinstance(n, ast.Constant) and n.value == ".." for n in nodes)
    if calls & _PATH_CHECKS or dotdot:
        return f"{label}, which checks each member's path"
    return None
