"""The safe rewrites the offline fixer knows, one function per weakness, each driven by the
library API the engine's trace names at the sink (never by a name the analysed code chose).

Each rewrite gets the parsed file, the syntax node the finding points at and what the trace
says about it, and returns the edits (``Change``) or raises ``NoRewrite`` with the reason:
the value is constant, the call is already safe, the shape is one a rewrite cannot be sure of.
Where no safe rewrite is known the fixer says so rather than guess. The rewrites live in
``libraries`` (yaml, random, hashes, XML), ``injection`` (commands, SQL) and ``web``
(redirects, paths, markup, cookies); their shared readings of the code in ``nodes``.
"""

from __future__ import annotations

from .injection import shell_to_argv, sql_parameters
from .libraries import defused_xml, random_to_secrets, strong_hash, yaml_safe_load
from .nodes import Change, NoRewrite, Site
from .web import contained_path, cookie_flags, escape_markup, same_site_redirect

__all__ = ["REWRITES", "Change", "NoRewrite", "Site"]

REWRITES = {"deserialization": yaml_safe_load, "command": shell_to_argv, "sql": sql_parameters,
            "random": random_to_secrets, "weak-hash": strong_hash, "xml-bomb": defused_xml, "xxe": defused_xml,
            "redirect": same_site_redirect, "path": contained_path, "xss": escape_markup,
            "cookie-secure": cookie_flags, "cookie-httponly": cookie_flags}
"""Weakness kind -> its rewrite. Kinds not here have no safe rewrite known."""
