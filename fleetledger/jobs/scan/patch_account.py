"""The account of each patch on a file: which worker wrote it, from which finding and trace, by
which rule or model, why it looks like that, what its validation found, and who approved
applying it (``fleetledger audit FILE`` and the HTML report). Read-only, from the ledger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ledger.records import iso_utc
from ...reader import RunReader
from .patch_apply import EFFECT_KIND, effect_key
from .report import candidates, fixes


def patch_account(run: RunReader, path: str = "") -> list[dict[str, Any]]:
    """Returns one entry per patch proposed for a file at or under ``path`` ("" or "." for all).

    Each entry: ``finding``, ``rule_id``, ``path``, ``line``, ``trace`` (the first trace:
    source, steps and sink as ``what (path:line)``), ``worker``, ``author``, ``rationale``,
    ``diff``, ``validation`` (or None), ``approvals`` (each ``by``, ``why``, ``ts``, ``scope``
    granted before the patch was applied, or while it waits), ``applied`` (the effect's
    result with its ``ts``, or None) and ``apply_state`` (``"applied"``, ``"unchanged"``
    (already patched), ``"uncertain"`` (intent without result), or ``"not applied"``).
    """
    prefix = path.strip("/")
    recorded = fixes(run)
    if not recorded:
        return []
    by_id = {c.id: c for c in candidates(run)}
    keys = {effect_key(finding) for finding in recorded}
    approvals: list[dict[str, Any]] = []
    effects: dict[str, dict[str, Any]] = {}
    for r in run.storage.read(run.view.run_id):
        if r.kind == "approval.granted" and r.payload.get("scope", {}).get("action") == "effect":
            approvals.append({"by": r.payload.get("by", "?"), "why": r.why, "ts": iso_utc(r.ts_ms), "seq": r.seq,
                              "scope": r.payload["scope"].get("target")})
        elif r.kind in ("effect.intent", "effect.done") and r.key in keys:
            effects.setdefault(r.key, {})[r.kind] = {"seq": r.seq, "ts": iso_utc(r.ts_ms), "payload": r.payload}
    out = []
    for finding, fix in recorded.items():
        proposal = fix["proposal"]
        if prefix not in ("", ".") and proposal["path"] != prefix and not proposal["path"].startswith(prefix + "/"):
            continue
        key = effect_key(finding)
        effect = effects.get(key, {})
        done, intent = effect.get("effect.done"), effect.get("effect.intent")
        until = intent["seq"] if intent else None
        covering = [a for a in approvals if a["scope"] in (EFFECT_KIND, key) and (until is None or a["seq"] < until)]
        candidate = by_id.get(finding)
        state = ("not applied" if intent is None else "uncertain" if done is None
                 else "applied" if done["payload"].get("changed") else "unchanged")
        out.append({"finding": finding, "rule_id": candidate.rule_id if candidate else "?", "path": proposal["path"],
                    "line": candidate.line if candidate else None, "trace": _trace(candidate.trace if candidate else None),
                    "worker": fix.get("worker", "?"), "author": proposal["author"], "rationale": proposal["rationale"],
                    "diff": proposal.get("diff"), "validation": fix.get("validation"), "approvals": covering,
                    "applied": {**done["payload"], "ts": done["ts"]} if done else None, "apply_state": state})
    return sorted(out, key=lambda e: (e["path"], e["line"] or 0, e["finding"]))


def _trace(trace: dict[str, Any] | None) -> list[str]:
    """The first taint trace as lines (source, steps, sink), or the check's site."""
    flows = (trace or {}).get("traces") or []
    if flows:
        flow = flows[0]
        hops = [("source", flow["source"])] + [("step", s) for s in flow["steps"]] + [("sink", flow["sink"])]
        return [f"{kind}: {place.get('what', '')} ({place['path']}:{place['line']})" for kind, place in hops]
    check = (trace or {}).get("check")
    if check:
        return [f"check: {check.get('message', '')} ({check['site']['path']}:{check['site']['line']})"]
    return []


def account_lines(entry: dict[str, Any]) -> list[str]:
    """The lines ``fleetledger audit FILE`` prints for one patch."""
    check = entry["validation"]
    lines = [f"patch for finding {entry['finding']} ({entry['rule_id']} at {entry['path']}:{entry['line']})",
             f"  written by: worker {entry['worker']}, {entry['author']}",
             f"  why it looks like that: {entry['rationale']}"]
    lines += [f"  trace: {hop}" for hop in entry["trace"]]
    if entry["diff"] is None:
        lines.append("  no patch: see why above")
        return lines
    if check is None:
        lines.append("  validation: not recorded")
    else:
        lines.append(f"  validation: {'passed' if check['ok'] else 'failed'}: {check['reason']} (applies: "
                     f"{check['applies']}, parses: {check['parses']}, finding cleared: {check['cleared']}, new: "
                     f"{', '.join(check['new']) or 'none'}, accepted: {', '.join(check['accepted']) or 'none'}; "
                     f"tests: {check['tests']})")
    for a in entry["approvals"]:
        lines.append(f"  approved by {a['by']} at {a['ts']} for {a['scope']!r}: {a['why']}")
    if not entry["approvals"]:
        lines.append("  approved by: nobody (not approved)")
    applied = entry["applied"]
    lines.append(f"  applied: {entry['apply_state']}" + (f" at {applied['ts']} (sha256 {applied['before_sha256'][:12]} -> "
                                                         f"{applied['sha256'][:12]})" if applied else ""))
    return lines


def account_html(entries: list[dict[str, Any]], _e: Callable[[object], str]) -> str:
    """The HTML report's table of the patches (``patch_account``): file, finding, worker,
    author, why it looks like that, its validation, who approved applying it, whether it was
    applied; ``_e`` escapes a value for HTML (the report's own)."""
    if not entries:
        return '<p class="empty">No patch was proposed (the run had no fix sprint, or no confirmed finding).</p>'
    rows = []
    for e in entries:
        check = e["validation"]
        checked = ("no patch" if e["diff"] is None else "not recorded" if check is None
                   else f"{'passed' if check['ok'] else 'failed'}: {check['reason']}; tests: {check['tests']}")
        approved = "; ".join(f"{a['by']} at {a['ts']}: {a['why']}" for a in e["approvals"]) or "nobody"
        diff = f'<details><summary>diff</summary><pre>{_e(e["diff"])}</pre></details>' if e["diff"] else ""
        trace = "<br>".join(_e(hop) for hop in e["trace"])
        rows.append(f'<tr><td class="loc">{_e(e["path"])}:{_e(e["line"])}</td><td>{_e(e["finding"])}<div class="sub">'
                    f'{_e(e["rule_id"])}</div></td><td>{_e(e["worker"])}</td><td>{_e(e["author"])}</td>'
                    f'<td class="why">{_e(e["rationale"])}<div class="sub">{trace}</div>{diff}</td>'
                    f'<td class="why">{_e(checked)}</td><td class="why">{_e(approved)}</td><td>{_e(e["apply_state"])}</td></tr>')
    return ('<table class="patches"><thead><tr><th>file</th><th>finding</th><th>worker</th><th>written by</th>'
            '<th>why it looks like that</th><th>validation</th><th>approved by</th><th>applied</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')
