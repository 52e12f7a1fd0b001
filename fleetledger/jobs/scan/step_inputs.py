"""The scan's detect and triage steps by name and input hash, and the checks that a recorded
result still holds (the model passes' are in ``investigate``, whose code identity must not
hold the detectors').

A worker running a task (``tasks``) and the coordinator settling a task whose every step has a
reusable earlier result (``ScanJob.known_steps``) must name and key each step the same way,
and judge an offered result by the same rule; both call these functions.
None of them reads the repository except to hash a file (``modules.read_file``: never through
a link, never outside the root), so the coordinator may call them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...analysis.definitions import module_index
from ...steps import input_hash
from ..base import KnownStep, KnownTask, TaskSpec
from .detect_version import detect_version
from .modules import disk_hashes, python_paths, still_holds
from .plan import MAX_SOURCE_BYTES, MAX_TEMPLATE_BYTES, Hashed, file_signature


def detect_step(planned: dict[str, Any]) -> tuple[str, str]:
    """Returns the name and input hash of the detect step of a planned file (``PlannedFile``'s
    JSON). The hash holds the file and the detectors; what the analysis read besides the file
    is in the result (``depends``), checked before a recorded result is reused
    (``detect_holds``)."""
    return f"detect:{planned['path']}", input_hash(planned["path"], planned["sha256"], detect_version())


def triage_step(item: dict[str, Any]) -> tuple[str, str]:
    """Returns the name and input hash of the triage step of a planned item (``candidate`` and
    ``answer``): the item decides the result."""
    return f"triage:{item['candidate']['id']}", input_hash(item)


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


RECENT_NS = 2_000_000_000
"""A file changed less than this before ``discover`` looked at it (2 s, far above any file
system's time resolution) is read again rather than known by its ``lstat``: a write in the
same clock tick as the look leaves the times as they were."""


def current_hashes(root: Path, hashed: dict[str, Hashed] | None = None) -> Callable[[str], str]:
    """Returns path -> the SHA-256 of a file of ``root`` as it is now ("" when it cannot be read
    whole: ``modules.disk_hashes``), each file read at most once: what an offered result is
    checked against, so that a file changed since the run was planned is never covered by a
    reused result. A file this process hashed while planning (``hashed``, ``plan.discover``)
    whose ``lstat`` is the same now, and whose change time was well before that look
    (``RECENT_NS``), is known without reading it again."""
    read = disk_hashes(root, max(MAX_SOURCE_BYTES, MAX_TEMPLATE_BYTES))
    if not hashed:
        return read
    base = str(root)

    def sha(relpath: str) -> str:
        known = hashed.get(relpath)
        if known is not None:
            try:
                info = os.lstat(os.path.join(base, relpath))
            except OSError:
                return read(relpath)
            if stat.S_ISREG(info.st_mode) and file_signature(info) == known.signature \
                    and info.st_ctime_ns + RECENT_NS < known.looked_ns:
                return known.sha256
        return read(relpath)

    return sha


def known_steps(root: Path, model: str, tasks: Sequence[tuple[TaskSpec, dict[str, Any]]], *,
                hashed: dict[str, Hashed] | None = None) -> dict[str, KnownTask]:
    """Keys the steps of detect, investigate, triage and revalidate tasks as their workers do,
    for the coordinator (``Job.known_steps``): an offered detect result holds when the file and
    what its analysis read are at their planned hashes now (``modules.still_holds``), an
    offered judgement when the candidate's file is (``investigate.file_holds``). Each file is
    read and hashed at most once per call; none is parsed. The brief is left to a worker: it
    reads the README and packaging files as text, in its sandbox.

    Args:
        root: The scanned root.
        model: The job's model spec (``ScanJob.model``), when a task's context names none.
        tasks: Pending tasks, each with the context its worker would get.
        hashed: The files this process hashed while planning (``current_hashes``).

    Returns:
        ``{task id: KnownTask}`` for the tasks of those kinds.
    """
    from .investigate import brief_sha, file_holds, judge_identity, judge_step

    on_disk = current_hashes(root, hashed)
    out: dict[str, KnownTask] = {}
    for spec, context in tasks:
        kind = spec.inputs.get("kind")
        if kind == "detect":
            readable, module_paths, index = readable_modules(context.get("shas", {}), context.get("readable", []))
            steps = tuple(KnownStep(name=name, inputs_hash=inputs,
                                    still_valid=detect_holds(f, readable, module_paths, index, on_disk))
                          for f in spec.inputs["files"] for name, inputs in (detect_step(f),))
            out[spec.id] = KnownTask(steps=steps, summary={"steps": 0, "reused": len(steps), "failed": 0})
        elif kind == "triage":
            steps = tuple(KnownStep(name=name, inputs_hash=inputs) for name, inputs in map(triage_step, spec.inputs["items"]))
            out[spec.id] = KnownTask(steps=steps, summary={"steps": 0, "failed": 0})
        elif kind in ("investigate", "revalidate"):
            files = spec.inputs["files"]
            identity = judge_identity(context.get("model", model))
            brief_hash = brief_sha(context.get("brief", ""))
            steps = tuple(KnownStep(name=name, inputs_hash=inputs,
                                    still_valid=file_holds(item["candidate"]["path"], files, on_disk))
                          for item in spec.inputs["items"]
                          for name, inputs in (judge_step(kind, item, files, identity, brief_hash),))
            out[spec.id] = KnownTask(steps=steps, summary={"steps": 0, "failed": 0})
    return out
