"""Fingerprints of results that survive edits around them (SARIF §3.27.17 ``partialFingerprints``).

A candidate's id (``shapes.candidate_id``) hashes its line number: one line added above a
finding changes it, and GitHub code scanning, which matches alerts across analyses by
``partialFingerprints``, would close the alert and open a new one (its dismissal lost). The
fingerprints here hash what the code *is* instead:

* ``context_hash`` (computed in the worker, the only place that reads the repository's files,
  and carried on the candidate as ``Candidate.context_hash``): SHA-256 of the sink line and
  ``CONTEXT_LINES`` lines either side with all whitespace removed, 16 hex digits, then ``:N``
  for the N-th line of the file (1-based, in line order) whose context hashes the same. That is
  the shape of GitHub's own ``primaryLocationLineHash`` (a hash of the line's content with
  context, ``:N`` for the N-th identical occurrence; docs: "SARIF support for code scanning",
  "Providing data to track code scanning alerts across runs"), so it is emitted under that key.
  It survives lines moving above the finding, re-indentation and whitespace changes, and two
  identical lines (``eval(x)`` twice in a row) stay distinct by their ``:N``.
* ``fingerprint`` (on the coordinator, at export): SHA-256 of the rule, the path, the context
  hash and, for a taint finding, the normalised texts of its trace's hops (source, steps, sink:
  what happens, never where), 32 hex digits, emitted under ``FINGERPRINT_KEY``. Versioned: a
  change of this recipe is a new key, never new values under the old one.

A candidate recorded before ``context_hash`` existed (an older ledger) gets it from its snippet
(the flagged lines with one line of context, which the candidate carries), numbered among the
report's candidates of the same file; ``snippet_context_hash`` says how.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

CONTEXT_LINES = 1
"""Lines either side of the sink in its context hash: enough that two equal calls in different
places differ, few enough that an edit two lines away leaves the fingerprint alone."""
FINGERPRINT_KEY = "fleetledgerFingerprint/v1"
"""Our own key in ``partialFingerprints``: rule, path, normalised code context, trace."""
LINE_HASH_KEY = "primaryLocationLineHash"
"""GitHub's key name for a line-content hash with a ``:N`` occurrence suffix."""
LEGACY_KEY = "candidateId/v1"
"""The key of earlier exports (the line-dependent candidate id); read from baselines only."""


def normalised(line: str) -> str:
    """Returns the line with every whitespace character removed (read-only).

    Args:
        line: One line of source text.
    """
    return "".join(line.split())


def _window_digest(norm: Sequence[str], index: int) -> str:
    first, last = max(index - CONTEXT_LINES, 0), min(index + CONTEXT_LINES + 1, len(norm))
    text = "\n".join(norm[first:last])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def context_hashes(lines: Sequence[str], wanted: Iterable[int]) -> dict[int, str]:
    """Returns the context hash of each wanted line of one file (worker side; read-only).

    Every line up to the last wanted one is hashed, so the ``:N`` suffix counts identical
    contexts among all lines above, not only among flagged ones: it does not change when a
    detector starts or stops flagging another copy. Linear in the text (each line is
    normalised once and hashed in ``2 * CONTEXT_LINES + 1`` windows).

    Args:
        lines: The file's lines without endings, item ``n - 1`` being line ``n``.
        wanted: 1-based line numbers; those outside the file are left out of the result.

    Returns:
        ``{line: "<16 hex>:<N>"}``.
    """
    targets = {n for n in wanted if 0 < n <= len(lines)}
    if not targets:
        return {}
    norm = [normalised(line) for line in lines[: max(targets) + CONTEXT_LINES]]
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for n in range(1, max(targets) + 1):
        digest = _window_digest(norm, n - 1)
        seen[digest] = seen.get(digest, 0) + 1
        if n in targets:
            out[n] = f"{digest}:{seen[digest]}"
    return out


def snippet_context_hashes(candidates: Iterable[Any]) -> dict[str, str]:
    """Returns a context hash for each candidate that has none (recorded by older code), by id.

    The hash is over the candidate's snippet, normalised like ``context_hashes``; ``:N`` numbers
    the candidates of the same path with the same digest in (line, column, id) order.

    Args:
        candidates: ``shapes.Candidate`` objects (read-only).

    Returns:
        ``{candidate id: "<16 hex>:<N>"}`` for those without ``context_hash``.
    """
    legacy = sorted((c for c in candidates if not c.context_hash), key=lambda c: (c.path, c.line, c.col, c.id))
    seen: dict[tuple[str, str], int] = {}
    out: dict[str, str] = {}
    for c in legacy:
        if c.id in out:
            continue
        norm = [normalised(line) for line in c.snippet.split("\n")]
        digest = hashlib.sha256("\n".join(norm).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        seen[(c.path, digest)] = seen.get((c.path, digest), 0) + 1
        out[c.id] = f"{digest}:{seen[(c.path, digest)]}"
    return out


def fingerprint(rule_id: str, path: str, context_hash: str, trace: dict[str, Any] | None) -> str:
    """Returns the value of ``FINGERPRINT_KEY`` for one result (read-only).

    Args:
        rule_id: The result's rule.
        path: The file's path relative to the scanned root.
        context_hash: The sink's context hash (``context_hashes``).
        trace: ``Candidate.trace`` or None; each trace's hops contribute their path and
            normalised ``what`` text, never a line or column.

    Returns:
        32 hex digits.
    """
    parts = [rule_id, path, context_hash]
    for one in (trace or {}).get("traces", []):
        hops = [one.get("source") or {}, *(one.get("steps") or []), one.get("sink") or {}]
        parts.append("|".join(f"{hop.get('path', '')}>{normalised(str(hop.get('what', '')))}" for hop in hops))
    text = "\0".join(parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
