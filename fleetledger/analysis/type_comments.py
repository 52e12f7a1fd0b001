"""PEP 484 type comments read as annotations: a function's, its parameters' and an assignment's.

Code written to run on Python 2 as well as 3 (and much that is still maintained) declares its
functions' types in comments, which Python's parser keeps only when asked
(``ast.parse(text, type_comments=True)``, Python 3.8+):

    def download(link, session, temp_dir):
        # type: (Link, PipSession, str) -> Tuple[str, str]

    def download(
        link,  # type: Link
        session,  # type: PipSession
    ):

A declared type tells the engine what a parameter holds (``session`` a ``requests.Session``, so
what its ``get`` returns is a response whose headers come from the network) exactly as an
annotation does, so each comment becomes the annotation of its parameter (or the function's
return) where the code gives none. The format is PEP 484's, section "Suggested syntax for
Python 2.7 and straddling code": the signature comment lists the parameters' types in order,
``*args``' and ``**kwargs``' without their stars, and leaves out the type of a method's
``self`` or ``cls``; ``(...)`` gives only the return type.
"""

from __future__ import annotations

import ast
import re
from .walks import walk

__all__ = ["DECLARED", "MARKER", "annotate"]

# A type comment starts like this (PEP 484); a file without one is parsed without type comments.
MARKER = re.compile(r"#\s*type:")

# The attribute of an ``ast.Assign`` that holds the type its comment declares
# (``session = make()  # type: PipSession``), read as an annotated assignment's annotation.
DECLARED = "declared_type"


def annotate(tree: ast.Module) -> None:
    """Gives each parameter and return of ``tree``'s functions the annotation its type comment
    declares, where it has none, and an assignment with one target the type its comment
    declares (its ``DECLARED`` attribute), in place.

    Args:
        tree: A module parsed with ``type_comments=True`` (the ``type_comment`` attributes of
            ``ast.FunctionDef``, ``ast.AsyncFunctionDef``, ``ast.arg`` and ``ast.Assign``); any other tree is
            left as it is.

    A comment that is not a valid type expression (``# type: ignore[...]`` is not a type
    comment for the parser; prose after ``type:`` is) is ignored, as are a signature comment
    whose number of types fits neither all parameters nor all but the first, and anything
    already annotated. The new nodes take the position of what they annotate.
    """
    for node in walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _function(node)
        elif isinstance(node, ast.Assign) and getattr(node, "type_comment", None) and len(node.targets) == 1:
            declared = _expression(node.type_comment, node)
            if declared is not None:
                setattr(node, DECLARED, declared)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    arguments = node.args
    params = [*arguments.posonlyargs, *arguments.args, *([arguments.vararg] if arguments.vararg else []),
              *arguments.kwonlyargs, *([arguments.kwarg] if arguments.kwarg else [])]
    for param in params:
        comment = getattr(param, "type_comment", None)
        if param.annotation is None and comment:
            param.annotation = _expression(comment, param)
    signature = _signature(node.type_comment, node) if getattr(node, "type_comment", None) else None
    if signature is None:
        return
    if node.returns is None:
        node.returns = signature.returns
    types = signature.argtypes
    if len(types) == 1 and isinstance(types[0], ast.Constant) and types[0].value is Ellipsis:
        return  # "(...) -> R": the return type only
    if len(types) == len(params) - 1:
        params = params[1:]  # a method's self or cls, whose type the comment leaves out
    if len(types) != len(params):
        return
    for param, declared in zip(params, types):
        if param.annotation is None:
            param.annotation = _placed(declared, param)


def _expression(text: str, where: ast.AST) -> ast.expr | None:
    try:
        return _placed(ast.parse(text.strip(), mode="eval").body, where)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _signature(text: str, where: ast.AST) -> ast.FunctionType | None:
    try:
        signature = ast.parse(text.strip(), mode="func_type")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    signature.returns = _placed(signature.returns, where)
    signature.argtypes = [_placed(t, where) for t in signature.argtypes]
    return signature


def _placed(expression: ast.expr, where: ast.AST) -> ast.expr:
    """``expression`` with every node at ``where``'s position (a comment's own positions
    count from the start of the comment's text, not of the file)."""
    for child in walk(expression):
        ast.copy_location(child, where)
    return expression
