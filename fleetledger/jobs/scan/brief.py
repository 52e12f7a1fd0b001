"""The repository brief: a few hundred words on what the scanned repository is.

Every investigation sees it. It is derived once per run from the README, the packaging files
and the top-level layout, capped in size (an exhaustive project file buries the signal; a short
brief sharpens it), and recorded in the ledger as the result of the ``brief`` step.

Reading is defensive: the repository is untrusted, so only a few named files are read, each
capped in size, and nothing is executed (``setup.py`` is read as text, never run).
"""

from __future__ import annotations

import configparser
import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

MAX_WORDS = 300
MAX_FILE_BYTES = 256 * 1024
README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md")
BRIEF_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "requirements.txt", *README_NAMES)
"""The files the brief reads, each only when the gate allows it."""
FRAMEWORKS = {
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "starlette": "Starlette",
    "aiohttp": "aiohttp", "tornado": "Tornado", "pyramid": "Pyramid", "bottle": "Bottle",
    "sanic": "Sanic", "falcon": "Falcon", "sqlalchemy": "SQLAlchemy", "celery": "Celery",
    "jinja2": "Jinja2", "pydantic": "pydantic", "requests": "requests", "click": "click",
    "paramiko": "paramiko", "boto3": "boto3", "pyyaml": "PyYAML", "numpy": "NumPy",
    "werkzeug": "Werkzeug", "gunicorn": "gunicorn", "uvicorn": "uvicorn", "djangorestframework": "Django REST framework",
    "graphene": "Graphene", "httpx": "httpx", "lxml": "lxml", "cryptography": "cryptography",
}
ENTRY_FILES = ("manage.py", "app.py", "wsgi.py", "asgi.py", "main.py", "__main__.py", "server.py", "cli.py")


def _read_text(path: Path) -> str | None:
    """The file's text (at most ``MAX_FILE_BYTES``), or None when it was not read: missing, not
    a regular file, a symbolic link (never followed), or unreadable."""
    try:
        if not path.is_file() or path.is_symlink():
            return None
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_LINK_DEFINITION = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.MULTILINE)
_REFERENCE_LINK = re.compile(r"\[([^\]]+)\](?:\[[^\]]*\]|\([^)]*\))")


def _readme_summary(read: Callable[[str], str]) -> str:
    """The README's first prose paragraphs (about 120 words): code blocks, link definitions,
    headings, badges and paragraphs that only introduce a code sample are left out, and links
    are reduced to their text."""
    for name in README_NAMES:
        text = read(name)
        if not text:
            continue
        text = _LINK_DEFINITION.sub("", _FENCE.sub("", text))
        paragraphs = []
        for block in re.split(r"\n\s*\n", text):
            line = " ".join(_REFERENCE_LINK.sub(r"\1", block).split())
            if not line or line.startswith(("#", "=", "-", "!", "..", "<", "|", ":", ">>>", "$ ")) or line.endswith(":"):
                continue
            paragraphs.append(line)
            if sum(len(p.split()) for p in paragraphs) > 120:
                break
        return " ".join(paragraphs)
    return ""


def _packaging(read: Callable[[str], str]) -> dict[str, Any]:
    facts: dict[str, Any] = {"deps": [], "scripts": []}
    text = read("pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        facts["name"] = project.get("name") or poetry.get("name")
        facts["description"] = project.get("description") or poetry.get("description")
        deps = project.get("dependencies") or list((poetry.get("dependencies") or {}).keys())
        facts["deps"] += [str(d) for d in deps if isinstance(d, str)]
        facts["scripts"] += sorted(str(k) for k in (project.get("scripts") or {}).keys())
    cfg_text = read("setup.cfg")
    if cfg_text:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(cfg_text)
            facts.setdefault("name", parser.get("metadata", "name", fallback=None))
            facts["description"] = facts.get("description") or parser.get("metadata", "description", fallback=None)
            facts["deps"] += parser.get("options", "install_requires", fallback="").split()
        except configparser.Error:
            pass
    setup_py = read("setup.py")
    for field in ("name", "description"):
        if not facts.get(field):
            match = re.search(rf"\b{field}\s*=\s*['\"]([^'\"]{{1,200}})['\"]", setup_py)
            if match:
                facts[field] = match.group(1)
    facts["deps"] += read("requirements.txt").split()
    return facts


def _frameworks(deps: list[str], root: Path) -> list[str]:
    names = {re.split(r"[<>=!~\[; ]", d.strip().lower(), maxsplit=1)[0] for d in deps if d.strip()}
    found = {label for key, label in FRAMEWORKS.items() if key in names}
    if (root / "manage.py").is_file():
        found.add("Django")
    return sorted(found)


def derive_brief(root: Path, readable: Collection[str] = BRIEF_FILES) -> dict[str, Any]:
    """Derives the brief of the repository at ``root`` (read-only, deterministic).

    Args:
        root: The scanned root.
        readable: The files of ``BRIEF_FILES`` the gate lets it read (each is a step read,
            checked before the task is assigned); the others are left out of the brief.

    Returns:
        ``{"text": str (at most MAX_WORDS words), "name", "frameworks": [...],
        "entry_points": [...], "sources": [...]}``: ``sources`` names the files of
        ``BRIEF_FILES`` that were read, in that order, and no other (not one that is only
        there, such as a second README, a link or an unreadable file).
    """
    read_names: set[str] = set()
    asked: dict[str, str] = {}

    def read(name: str) -> str:
        text = _read_text(root / name) if name in readable else None
        asked[name] = _text_sha(text)
        if text is None:
            return ""
        read_names.add(name)
        return text

    facts = _packaging(read)
    readme = _readme_summary(read)
    top = _top(root)
    name = facts.get("name") or root.name
    frameworks = _frameworks(facts["deps"], root)
    entries = [f"console script {s}" for s in facts["scripts"]] + [f for f in ENTRY_FILES if (root / f).is_file()]
    parts = [f"Repository {name}."]
    if facts.get("description"):
        parts.append(f"Purpose: {str(facts['description']).rstrip('.')}.")
    if readme:
        parts.append(f"README: {readme}")
    parts.append(f"Frameworks and notable libraries: {', '.join(frameworks) or 'none detected'}.")
    parts.append(f"Entry points: {', '.join(entries) or 'none detected'}.")
    parts.append(f"Top level: {', '.join(top[:40])}{' ...' if len(top) > 40 else ''}.")
    words = " ".join(parts).split()
    text = " ".join(words[:MAX_WORDS]) + (" ..." if len(words) > MAX_WORDS else "")
    sources = [n for n in BRIEF_FILES if n in read_names]
    return {"text": text, "name": name, "frameworks": frameworks, "entry_points": entries, "sources": sources,
            "depends": {"files": dict(sorted(asked.items())), "layout": _layout(root)}}


def _text_sha(text: str | None) -> str:
    """SHA-256 hex of a file's text as the brief read it; "" for a file it could not read."""
    return "" if text is None else hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _top(root: Path) -> list[str]:
    """The root folder's top-level entries as the brief lists them (folders end with "/"; dot
    files and links left out); [] when it cannot be listed."""
    try:
        return sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir()
                      if not p.name.startswith(".") and not p.is_symlink())
    except OSError:
        return []


def _layout(root: Path) -> str:
    """SHA-256 hex of what the brief sees of the root folder besides the files it reads: the
    folder's name, its top level (``_top``) and which entry files are files."""
    entries = [f for f in ENTRY_FILES if (root / f).is_file()]
    return hashlib.sha256(json.dumps([root.name, _top(root), entries]).encode("utf-8", "surrogateescape")).hexdigest()


def brief_holds(result: dict[str, Any], root: Path, readable: Collection[str]) -> bool:
    """Says whether a brief recorded by an earlier scan is the brief of the tree at ``root`` now
    (read-only): every file it asked for reads the same (or is still unreadable or absent),
    and the root's name and top level are the same. A brief recorded without ``depends`` never
    holds: its key (the Python files' listing) does not cover the README or packaging files.

    Args:
        result: The recorded ``derive_brief`` result.
        root: The scanned root.
        readable: The files of ``BRIEF_FILES`` the gate lets the brief read now.
    """
    depends = result.get("depends")
    if not isinstance(depends, dict) or not isinstance(depends.get("files"), dict):
        return False
    for name, sha in depends["files"].items():
        if _text_sha(_read_text(root / name) if name in readable else None) != sha:
            return False
    return depends.get("layout") == _layout(root)
