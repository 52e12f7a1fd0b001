"""What the worker records about the code around each candidate, for the export to use later.

The coordinator never reads the repository's files, so everything the export needs from the
code around a finding is taken here, in the worker's sandbox, and carried on the candidate:

* ``Candidate.context_hash``: the normalised-context hash of its line (``fingerprints``), from
  which the export builds fingerprints that survive lines moving above the finding;
* ``Candidate.suppression``: the ``# nosec`` / ``# noqa: B...`` comment on its lines (``nosec``),
  recorded whether or not the user honours them (an export-time choice).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from . import fingerprints, nosec
from .shapes import Candidate


def annotate(candidates: Sequence[Candidate], path_lines: Mapping[str, list[str]]) -> list[Candidate]:
    """Returns the candidates with ``context_hash`` and ``suppression`` filled (read-only).

    Args:
        candidates: The file's candidates; a taint candidate may sit in another file of the
            repository, whose lines ``path_lines`` gives.
        path_lines: Path -> the file's lines without endings (``.get(path)``: ``[]`` or None
            when unreadable, and then the fields stay None).

    Returns:
        New candidates in the same order; ids, lines and everything else unchanged.
    """
    by_path: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_path.setdefault(c.path, []).append(c)
    marks: dict[str, tuple[str | None, dict | None]] = {}
    for path, group in by_path.items():
        lines = path_lines.get(path) or []
        hashes = fingerprints.context_hashes(lines, {c.line for c in group})
        wanted = {n for c in group for n in range(c.line, min(max(c.end_line, c.line), c.line + nosec.MAX_LINES_CHECKED - 1) + 1)}
        comments = nosec.comments(lines, wanted)
        for c in group:
            marks[c.id] = (hashes.get(c.line), nosec.suppression_for(lines, c.line, c.end_line, comments))
    return [replace(c, context_hash=marks[c.id][0], suppression=marks[c.id][1]) for c in candidates]
