"""Rewrites of unsafe library calls to their safe equivalents: yaml loaders, ``random`` for
secrets, weak hashes, XML parsers."""

from __future__ import annotations

import ast

from .nodes import Change, NoRewrite, Site, dotted, imported_from, keyword, remove_keyword
from .text import Edit, Source


# -- deserialization: yaml.load -> yaml.safe_load ----------------------------------------

_YAML_SAFE = {"load": "safe_load", "load_all": "safe_load_all", "unsafe_load": "safe_load",
              "unsafe_load_all": "safe_load_all", "full_load": "safe_load", "full_load_all": "safe_load_all"}
_SAFE_LOADERS = ("SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader")


def yaml_safe_load(src: Source, call: ast.Call, site: Site) -> Change:
    """``yaml.load(doc)`` (and ``load_all``, ``unsafe_load``, ``full_load``) ->
    ``yaml.safe_load(doc)``, which builds only plain data (no Python objects)."""
    api = site.api or ""
    if not api.startswith("yaml.") and site.api is not None:
        raise NoRewrite(f"no safe rewrite known for deserialization by {api}: it has no safe mode that keeps its "
                        "behaviour; parse a data format (JSON) instead")
    name = dotted(call.func) or ""
    attr = name.rsplit(".", 1)[-1]
    if attr not in _YAML_SAFE:
        raise NoRewrite(f"{name}() is not a yaml loader this rewrite knows")
    loader = keyword(call, "Loader") or (call.args[1] if len(call.args) > 1 else None)
    loader_name = dotted(loader.value if isinstance(loader, ast.keyword) else loader) if loader is not None else None
    if loader_name and loader_name.rsplit(".", 1)[-1] in _SAFE_LOADERS:
        raise NoRewrite(f"the call is already safe: it passes Loader={loader_name}")
    if isinstance(call.args[0] if call.args else None, ast.Constant):
        raise NoRewrite("the value is constant: the document is a literal in the code")
    edits = []
    if isinstance(call.func, ast.Attribute):
        start, end = src.span(call.func)
        edits.append(Edit(start=end - len(attr), end=end, new=_YAML_SAFE[attr]))
        imports: tuple[str, ...] = ()
    else:
        start, end = src.span(call.func)
        edits.append(Edit(start=start, end=end, new=f"yaml.{_YAML_SAFE[attr]}"))
        imports = ("yaml",)
    if isinstance(loader, ast.keyword):
        edits.append(remove_keyword(src, call, loader))
    elif loader is not None:
        edits.append(Edit(start=src.span(call.args[0])[1], end=src.span(loader)[1], new=""))
    return Change(name="yaml-safe-load", edits=edits, imports=imports,
                  rationale=f"{name}() builds arbitrary Python objects from the document it is given, which here "
                            f"comes from outside; yaml.{_YAML_SAFE[attr]}() builds only plain data (dicts, lists, "
                            "strings, numbers), which is what a document from outside may hold")



# -- random numbers for a secret -> secrets ------------------------------------------------

_SECRETS = {"choice": "secrets.choice", "getrandbits": "secrets.randbits"}


def random_to_secrets(src: Source, call: ast.Call, site: Site) -> Change:
    """``random.X(...)`` -> ``secrets.choice``/``secrets.randbits`` or
    ``secrets.SystemRandom().X(...)`` (the operating system's generator, same methods)."""
    name = dotted(call.func) or ""
    attr = name.rsplit(".", 1)[-1]
    module_attr = isinstance(call.func, ast.Attribute) and dotted(call.func.value) == "random"
    imported_name = isinstance(call.func, ast.Name) and imported_from(src, call.func.id, "random")
    if not module_attr and not imported_name:
        raise NoRewrite(f"{name}() is not a function of the random module (already safe, or a generator object "
                        "whose seed this rewrite cannot see)")
    if attr in ("seed", "Random", "getstate", "setstate"):
        raise NoRewrite(f"random.{attr}() makes or sets a reproducible generator; that is not a secret's source")
    new = _SECRETS.get(attr, f"secrets.SystemRandom().{attr}")
    start, end = src.span(call.func)
    return Change(name="random-to-secrets", edits=[Edit(start=start, end=end, new=new)], imports=("secrets",),
                  rationale=f"random.{attr}() comes from a predictable generator (Mersenne Twister) and its value "
                            f"becomes a secret; {new}() draws from the operating system's generator")



# -- weak hashes -> sha256 -----------------------------------------------------------------

_WEAK = ("md5", "sha1", "md4", "md2")


def strong_hash(src: Source, call: ast.Call, site: Site) -> Change:
    """``hashlib.md5(x)`` / ``hashlib.sha1(x)`` / ``hashlib.new("md5", x)`` -> sha256."""
    name = dotted(call.func) or ""
    flag = keyword(call, "usedforsecurity")
    if flag is not None and isinstance(flag.value, ast.Constant) and flag.value.value is False:
        raise NoRewrite("the call is already safe: it passes usedforsecurity=False")
    if isinstance(call.func, ast.Attribute) and dotted(call.func.value) == "hashlib" and call.func.attr in _WEAK:
        start, end = src.span(call.func)
        edit = Edit(start=end - len(call.func.attr), end=end, new="sha256")
        weak = call.func.attr
    elif isinstance(call.func, ast.Name) and call.func.id in _WEAK and imported_from(src, call.func.id, "hashlib"):
        start, end = src.span(call.func)
        edit = Edit(start=start, end=end, new="hashlib.sha256")
        weak = call.func.id
        return Change(name="strong-hash", edits=[edit], imports=("hashlib",), rationale=_hash_rationale(weak))
    elif name == "hashlib.new" and call.args and (_module_constant(src, call.args[0]) or "").lower().replace("-", "") in _WEAK:
        # a module constant names the algorithm: the constant changes, so every call that uses it agrees
        start, end = src.span(_constant_node(src, call.args[0]))
        edit = Edit(start=start, end=end, new='"sha256"')
        weak = _module_constant(src, call.args[0]) or ""
    else:
        raise NoRewrite(f"no safe rewrite known for {name}(): not a hashlib constructor of a weak hash")
    return Change(name="strong-hash", edits=[edit], rationale=_hash_rationale(weak))


def _hash_rationale(weak: str) -> str:
    return (f"{weak.upper()} is broken for security uses (collisions can be made); SHA-256 is not. A digest stored "
            "earlier (a password table) no longer matches and needs a migration; where the hash protects nothing, "
            "usedforsecurity=False is the lighter change")


def _constant_node(src: Source, node: ast.expr) -> ast.expr:
    """The string literal a name stands for (``_module_constant``), or the node itself."""
    if isinstance(node, ast.Name):
        for n in src.tree.body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and n.targets[0].id == node.id:
                return n.value
    return node


def _module_constant(src: Source, node: ast.expr) -> str | None:
    """A string constant, or a module-level name assigned a string constant once."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        values = [n.value for n in src.tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and n.targets[0].id == node.id]
        stores = [n for n in ast.walk(src.tree) if isinstance(n, ast.Name) and n.id == node.id
                  and not isinstance(n.ctx, ast.Load)]
        if len(values) == 1 == len(stores) and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str):
            return values[0].value
    return None


# -- XML parsing of outside input -> defusedxml ----------------------------------------

_DEFUSED = {"xml.etree.ElementTree": ("defusedxml.ElementTree", {"parse", "iterparse", "fromstring", "XML", "XMLParser"}),
            "xml.etree.cElementTree": ("defusedxml.ElementTree", {"parse", "iterparse", "fromstring", "XML", "XMLParser"}),
            "xml.dom.minidom": ("defusedxml.minidom", {"parse", "parseString"}),
            "xml.dom.pulldom": ("defusedxml.pulldom", {"parse", "parseString"}),
            "xml.sax": ("defusedxml.sax", {"parse", "parseString", "make_parser"}),
            "xml.dom.expatbuilder": ("defusedxml.expatbuilder", {"parse", "parseString"})}


def defused_xml(src: Source, call: ast.Call, site: Site) -> Change:
    """A standard-library XML parse of outside input -> the same function of defusedxml
    (entities and external references refused); lxml -> a parser with
    ``resolve_entities=False, no_network=True``."""
    api = site.api or ""
    module, _, function = api.rpartition(".")
    if module.startswith("lxml."):
        return _lxml(src, call, api)
    if module not in _DEFUSED or function not in _DEFUSED[module][1]:
        raise NoRewrite(f"no safe rewrite known for {api or dotted(call.func)}(): defusedxml has no equivalent")
    if function in ("parse", "parseString", "iterparse", "fromstring", "XML") and (
            keyword(call, "parser") is not None or len(call.args) > (2 if function == "iterparse" else 1)):
        raise NoRewrite("the call passes its own parser, which defusedxml would use as it is (unsafe features "
                        "included); make that parser safe by hand")
    safe = _DEFUSED[module][0]
    start, end = src.span(call.func)
    return Change(name="defusedxml", edits=[Edit(start=start, end=end, new=f"{safe}.{function}")], imports=(safe,),
                  rationale=f"{api}() expands entities of the document it parses, which comes from outside (a "
                            f"billion-laughs document exhausts memory); {safe}.{function}() refuses entity "
                            "declarations and external references (needs the defusedxml package)")


def _lxml(src: Source, call: ast.Call, api: str) -> Change:
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ("fromstring", "XML", "parse"):
        raise NoRewrite(f"no safe rewrite known for {api}()")
    if keyword(call, "parser") is not None or len(call.args) > 1:
        raise NoRewrite("the call passes its own parser; its options are left to a person")
    module = src.segment(call.func.value)
    end = src.span(call.args[-1])[1] if call.args else src.span(call)[1] - 1
    new = f", parser={module}.XMLParser(resolve_entities=False, no_network=True)"
    return Change(name="lxml-no-entities", edits=[Edit(start=end, end=end, new=new)],
                  rationale=f"{api}() resolves entities by default (before lxml 5); a parser with "
                            "resolve_entities=False and no_network=True neither expands nor fetches them")
