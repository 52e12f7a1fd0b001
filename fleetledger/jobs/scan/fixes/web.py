"""Rewrites of web weaknesses: an open redirect, a path joined with outside input, markup
from outside input, cookie flags."""

from __future__ import annotations

import ast

from .nodes import Change, NoRewrite, Site, argument, contains, dotted, is_true, keyword
from .strings import pieces
from .text import Edit, Source


# -- open redirect -> a same-site check ----------------------------------------------------

SAME_SITE_HELPER = "_same_site_url"


def same_site_redirect(src: Source, call: ast.Call, site: Site) -> Change:
    """``redirect(x)`` -> ``redirect(_same_site_url(x))``, a helper added to the module that
    keeps a URL without a scheme or a host (a path on this site) and sends anything else to
    ``/``."""
    target = argument(call, site.role or "argument 1")
    parts = pieces(target)
    if isinstance(target, ast.Constant) or (parts is not None and all(p.node is None for p in parts)):
        raise NoRewrite("the value is constant: the redirect goes where the code says")
    start, end = src.span(target)
    edits = [Edit(start=start, end=start, new=f"{SAME_SITE_HELPER}("), Edit(start=end, end=end, new=")")]
    if not any(isinstance(n, ast.FunctionDef) and n.name == SAME_SITE_HELPER for n in src.tree.body):
        nl = src.newline
        tail = "" if src.text.endswith(("\n", "\r")) else nl
        helper = (f"{tail}{nl}{nl}def {SAME_SITE_HELPER}(url, fallback=\"/\"):{nl}"
                  f"    \"\"\"Returns url when it stays on this site (no scheme, no host), else fallback.\"\"\"{nl}"
                  f"    parts = urllib.parse.urlsplit(url){nl}"
                  f"    if parts.scheme or parts.netloc or url.startswith((\"//\", \"/\\\\\")):{nl}"
                  f"        return fallback{nl}"
                  f"    return url{nl}")
        edits.append(Edit(start=len(src.text), end=len(src.text), new=helper))
    return Change(name="same-site-redirect", edits=edits, imports=("urllib.parse",),
                  rationale="the redirect target came from outside, so a link could send users to any site; the "
                            f"check ({SAME_SITE_HELPER}) keeps paths on this site and sends anything with a scheme "
                            "or a host (or a protocol-relative //host) to /")


# -- path joined with outside input -> a containment check --------------------------------


def contained_path(src: Source, call: ast.Call, site: Site) -> Change:
    """``open(os.path.join(BASE, x))`` -> the real path of the join, checked to lie inside the
    real path of ``BASE`` before the statement that uses it (``PermissionError`` if not)."""
    arg = argument(call, site.role or "argument 1")
    if isinstance(arg, ast.Constant):
        raise NoRewrite("the value is constant: the path is fixed in the code")
    if not (isinstance(arg, ast.Call) and dotted(arg.func) in ("os.path.join", "path.join", "join", "posixpath.join")
            and len(arg.args) >= 2 and not arg.keywords):
        raise NoRewrite("the path is not joined onto a base folder here (os.path.join(BASE, ...)), so there is no "
                        "folder to contain it in")
    base = arg.args[0]
    if pieces(base) is not None and any(p.node is not None for p in pieces(base) or []):
        raise NoRewrite("the base folder itself is built from values; a containment check needs a fixed one")
    statement = _statement(src, call)
    if statement is None:
        raise NoRewrite("the call is not inside a statement a check can go before (a lambda, a comprehension, "
                        "a loop condition)")
    os_name = "os" if dotted(arg.func) == "os.path.join" or "os" in src.imports() else None
    if os_name is None:
        raise NoRewrite("the file does not import os, which the check uses")
    name = _fresh(src, "safe_path")
    indent = src.indent_of(statement.lineno)
    nl = src.newline
    joined = src.segment(arg)
    base_text = src.segment(base)
    check = (f"{indent}{name} = os.path.realpath({joined}){nl}"
             f"{indent}if not {name}.startswith(os.path.realpath({base_text}) + os.sep):{nl}"
             f"{indent}    raise PermissionError({name}){nl}")
    line_start = src.line_start(statement.lineno)
    start, end = src.span(arg)
    return Change(name="contained-path", imports=("os",),
                  edits=[Edit(start=line_start, end=line_start, new=check), Edit(start=start, end=end, new=name)],
                  rationale="the path was joined with a name from outside, so ../ (or an absolute path) could reach "
                            "any file; the real path of the join is now checked to lie inside the real path of the "
                            "base folder before it is used")


def _statement(src: Source, node: ast.AST) -> ast.stmt | None:
    """The innermost simple statement (or ``with``/``if``, not ``elif``) on its own line that
    holds ``node``, where a statement may be inserted before it."""
    best: ast.stmt | None = None

    def visit(parent: ast.AST, stmt: ast.stmt | None) -> bool:
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
                    and contains(child, node):
                return False
            here = child if isinstance(child, ast.stmt) else stmt
            if child is node:
                nonlocal best
                best = stmt
                return True
            if visit(child, here):
                return True
        return False

    visit(src.tree, None)
    if best is None or isinstance(best, (ast.While, ast.For, ast.AsyncFor)):
        return None
    line = src.lines[best.lineno - 1]
    if not line[:len(line) - len(line.lstrip())] + line.lstrip() or line.lstrip().startswith("elif"):
        return None
    if src.offset(best.lineno, best.col_offset) != src.line_start(best.lineno) + len(src.indent_of(best.lineno)):
        return None  # shares its line with another statement (a; b)
    return best


def _fresh(src: Source, stem: str) -> str:
    used = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)} | \
           {n.arg for n in ast.walk(src.tree) if isinstance(n, ast.arg)}
    name, k = stem, 2
    while name in used:
        name, k = f"{stem}_{k}", k + 1
    return name


# -- markup from outside -> escaping ----------------------------------------------------------


def escape_markup(src: Source, node: ast.AST, site: Site) -> Change:
    """Each value put into markup built from text (``"<p>" + x``, an f-string, ``%``,
    ``format``) -> ``html.escape(str(x))``; a response that is the value alone -> the
    value escaped."""
    target: ast.AST = node
    if isinstance(node, ast.Call) and site.role.startswith("argument"):
        target = argument(node, site.role)
    if not isinstance(target, ast.expr):
        raise NoRewrite("the sink is not an expression")
    if isinstance(target, ast.Constant):
        raise NoRewrite("the value is constant: the markup is fixed in the code")
    if isinstance(target, ast.Call) and dotted(target.func) in ("html.escape", "markupsafe.escape", "escape",
                                                                     "flask.escape", "django.utils.html.escape"):
        raise NoRewrite("the call is already safe: the value is escaped")
    parts = pieces(target)
    edits = []
    if parts is None:
        start, end = src.span(target)
        if isinstance(target, ast.Call) and dotted(target.func) == "str":
            edits = [Edit(start=start, end=start, new="html.escape("), Edit(start=end, end=end, new=")")]
        elif isinstance(target, ast.Call):
            raise NoRewrite(f"the markup is what {dotted(target.func) or 'a call'}() returns (a template or a "
                            "library makes it, and escaping its result would escape its own markup, or change "
                            "bytes); escape the value where it is put into markup")
        else:
            edits = [Edit(start=start, end=start, new="html.escape(str("), Edit(start=end, end=end, new="))")]
    else:
        values = [p.node for p in parts if p.node is not None]
        if not values:
            raise NoRewrite("the value is constant: the markup is fixed in the code")
        if isinstance(target, ast.JoinedStr) and any(isinstance(v, ast.JoinedStr) for v in values):
            raise NoRewrite("a nested f-string; escaping its parts is left to a person")
        concat = isinstance(target, ast.BinOp) and isinstance(target.op, ast.Add)
        for value in values:  # a value added to text is text already; one formatted in may not be
            start, end = src.span(value)
            edits += [Edit(start=start, end=start, new="html.escape(" if concat else "html.escape(str("),
                      Edit(start=end, end=end, new=")" if concat else "))")]
    return Change(name="escape-markup", edits=edits, imports=("html",),
                  rationale="outside data was put into an HTML page as it is, so it could add markup and scripts; "
                            "html.escape() turns its <, >, & and quotes into text")


# -- cookies -> secure=True, httponly=True ------------------------------------------------


def cookie_flags(src: Source, call: ast.Call, site: Site) -> Change:
    """``set_cookie(k, v)`` -> ``set_cookie(k, v, secure=True, httponly=True)``: the flags
    missing or false set to true."""
    if any(k.arg is None for k in call.keywords):
        raise NoRewrite("the call passes **keywords, which may set the flags; left to a person")
    edits = []
    for flag in ("secure", "httponly"):
        kw = keyword(call, flag)
        if kw is None:
            continue
        if is_true(kw.value):
            continue
        if not isinstance(kw.value, ast.Constant):
            raise NoRewrite(f"{flag}= is set from a value ({ast.unparse(kw.value)}); it may be meant for local "
                            "development, so it is left to a person")
        start, end = src.span(kw.value)
        edits.append(Edit(start=start, end=end, new="True"))
    missing = [f for f in ("secure", "httponly") if keyword(call, f) is None]
    if missing:
        items = [*call.args, *call.keywords]
        if not items:
            raise NoRewrite("set_cookie() has no arguments")
        end = max(src.span(i)[1] for i in items)
        edits.append(Edit(start=end, end=end, new="".join(f", {f}=True" for f in missing)))
    if not edits:
        raise NoRewrite("the call is already safe: it passes secure=True and httponly=True")
    return Change(name="cookie-flags", edits=edits,
                  rationale="the cookie went over plain HTTP and was readable by page scripts; secure=True sends it "
                            "over HTTPS only and httponly=True hides it from scripts (a site served over plain HTTP "
                            "must move to HTTPS for the cookie to be sent)")
