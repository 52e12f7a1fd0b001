"""The scan's steps by name and input hash, and the checks that a recorded result still holds.

A worker running a task (``tasks``, ``investigate``) and the coordinator settling a task whose
every step has a reusable earlier result (``ScanJob.reusable_steps``) must name and key each
step the same way, and judge an offered result by the same rule; both call these functions.
None of them reads the repository except to hash a file (``modules.read_file``: never through
a link, never outside the root), so the coordinator may call them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...analysis.definitions import module_index
from ...steps import input_hash
from .detect import DETECT_VERSION
from .modules import disk_hashes, python_paths, still_holds
from .plan import MAX_SOURCE_BYTES, MAX_TEMPLATE_BYTES

if TYPE_CHECKING:
    from ...models import ModelProvider


def detect_step(planned: dict[str, Any]) -> tuple[str, str]:
    """Returns the name and input hash of the detect step of a planned file (``PlannedFile``'s
    JSON). The hash holds the file and the detectors; what the analysis read besides the file
    is in the result (``depends``), checked before a recorded result is reused
    (``detect_holds``)."""
    return f"detect:{planned['path']}", input_hash(planned["path"], planned["sha256"], DETECT_VERSION)


def triage_step(item: dict[str, Any]) -> tuple[str, str]:
    """Returns the name and input hash of the triage step of a planned item (``candidate`` and
    ``answer``): the item decides the result."""
    return f"triage:{item['candidate']['id']}", input_hash(item)


def judge_identity(model: str) -> tuple[str, ...]:
    """Returns what names the model in an investigate or revalidate step's input hash: the
    provider's name and model for one that runs in the worker (the offline analyst), else the
    spec's provider and model and the prompt version (``model``: the job's model spec)."""
    from ...models import parse_spec
    from ...models.prompts import PROMPT_VERSION

    spec = parse_spec(model)
    if spec.runs_locally:
        provider = local_provider(str(spec))
        return (provider.name, provider.model)
    return (spec.provider, spec.model, PROMPT_VERSION)


_providers: dict[str, "ModelProvider"] = {}


def local_provider(spec: str) -> "ModelProvider":
    """The provider that runs in this process for ``spec`` (the offline analyst), made once."""
    if spec not in _providers:
        from ...models import get_provider

        _providers[spec] = get_provider(spec)
    return _providers[spec]


def brief_sha(brief: str) -> str:
    """SHA-256 hex of the repository brief's text, part of every model step's input hash."""
    return hashlib.sha256(brief.encode("utf-8", "surrogateescape")).hexdigest()


def judge_step(pass_name: str, item: dict[str, Any], files: dict[str, str], identity: tuple[str, ...],
               brief_hash: str) -> tuple[str, str]:
    """Returns the name and input hash of an investigate or revalidate step: the item (the
    candidate, and on revalidate the first answer), the planned hash of its file, the model
    (``judge_identity``) and the brief (``brief_sha``)."""
    candidate = item["candidate"]
    return (f"{pass_name}:{candidate['id']}",
            input_hash(item, files[candidate["path"]], *identity, brief_hash))


_derived: dict[tuple[int, int], tuple[Any, ...]] = {}


def readable_modules(shas: dict[str, str], readable: list[str]) -> tuple[dict[str, str], tuple[str, ...], Any]:
    """The files a detect step's engine may read (path -> planned hash), the Python files
    among them, sorted, and their ``module_index`` (the module names an import may resolve to),
    for ``detect_holds``. Derived once per process for the same context objects (a worker
    hands every task the same ones; the coordinator builds them once per session), so that the
    engine's caches keyed on the mapping hold across tasks.

    Args:
        shas: Path -> planned SHA-256 of every file the run planned (the context's ``shas``).
        readable: The paths among them the gate lets the engine read (the context's ``readable``).
    """
    key = (id(shas), id(readable))
    known = _derived.get(key)
    if known is None or known[0] is not shas or known[1] is not readable:
        allowed = {path: shas[path] for path in readable if path in shas}
        _derived.clear()
        paths = python_paths(allowed)
        known = (shas, readable, allowed, paths, module_index(paths))
        _derived[key] = known
    return known[2], known[3], known[4]


def detect_holds(planned: dict[str, Any], readable: dict[str, str], module_paths: tuple[str, ...],
                 index: Any, on_disk: Callable[[str], str]) -> Callable[[dict[str, Any]], bool]:
    """Returns the check that a detect result recorded earlier is this scan's result for the
    planned file (``modules.still_holds``, with the files as they are now: ``on_disk``)."""
    return lambda result: still_holds(result, planned, readable, module_paths, on_disk, index)


def file_holds(path: str, files: dict[str, str], on_disk: Callable[[str], str]) -> Callable[[dict[str, Any]], bool]:
    """Returns the check that a judgement recorded earlier still holds: the candidate's file
    (``path``) is at its planned hash (``files``) now. The worker checks the same by reading
    and decoding the file; a file at its planned hash decodes as it did when detect found the
    candidate, so the hash decides."""
    return lambda result: on_disk(path) == files[path]


def current_hashes(root: Path) -> Callable[[str], str]:
    """Returns path -> the SHA-256 of a file of ``root`` as it is now ("" when it cannot be read
    whole: ``modules.disk_hashes``), each file read at most once: what an offered result is
    checked against, so that a file changed since the run was planned is never covered by a
    reused result."""
    return disk_hashes(root, max(MAX_SOURCE_BYTES, MAX_TEMPLATE_BYTES))
