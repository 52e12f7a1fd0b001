"""CWE-78, OS command injection: what a process-starting call runs, and who chose it."""

from __future__ import annotations

import ast

from ..assessment import CERTAIN, OPEN, Assessment, Site, from_trace
from ..sinks import command_sink
from ..taint import Tracer

CWE = 78


def assess(site: Site) -> Assessment | None:
    """Judges a ``subprocess``/``os.system``/``os.exec*`` call (bandit B602-B606, B601).

    A shell command line (``shell=True``, ``os.system``, or an argument list that starts a
    shell with ``-c``) is injectable through any part an attacker controls unless that part is
    quoted (``shlex.quote``), cast to a number or validated against an allowlist or a tight
    pattern. An argument vector run without a shell is injectable only through its program
    slot; its other items can at most add options (argument injection, not assessed here). A
    program slot filled by a parameter is a tool path its callers configure: ``uncertain``
    (the sceptical pass keeps it only if a caller in the file passes outside data).

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not a process start this check knows.
    """
    if not isinstance(site.node, ast.Call):
        return None
    tree = site.tree
    sink = command_sink(tree, site.node, Tracer(tree, "shell").literal)
    if sink is None:
        return None
    lead = f"{sink.api}() starts a process; {sink.note}."
    if sink.mode in ("shell", "hidden-shell"):
        return from_trace(Tracer(tree, "shell").trace(sink.value), cwe=CWE, sink="shell",
                          value="the shell command line", facts=(lead,))
    if sink.value is None:
        return Assessment(verdict="not_vulnerable", confidence=CERTAIN, cwe=CWE, facts=(lead,),
                          signals={"sink": "argv", "source": "constant", "sanitised": False})
    found = from_trace(Tracer(tree, "argv").trace(sink.value), cwe=CWE, sink="argv",
                       value="the program to run" if not sink.whole_argv else "the argument vector", facts=(lead,))
    worst = found.trace.worst() if found.trace is not None else None
    if not sink.whole_argv and found.verdict == "vulnerable" and worst is not None and worst.kind == "parameter":
        caveat = ("Without a shell a parameter can only choose which program runs, a tool path its callers configure; "
                  "it is command injection only where a caller passes outside data, which this file does not show.")
        return Assessment(verdict="uncertain", confidence=OPEN, cwe=CWE, facts=(*found.facts, caveat),
                          signals=found.signals, trace=found.trace, sink=found.sink)
    if sink.whole_argv and found.verdict == "vulnerable":
        caveat = "Without a shell only the program slot could inject a command, and the syntax does not show which item that is."
        return Assessment(verdict="uncertain", confidence=OPEN, cwe=CWE, facts=(*found.facts, caveat),
                          signals=found.signals, trace=found.trace, sink=found.sink)
    return found


def assess_partial_path(site: Site) -> Assessment | None:
    """Judges bandit B607 (a program started by a partial path such as ``"git"``).

    Resolving a program through ``PATH`` matters only to someone who can already change the
    process's ``PATH`` or write into a directory on it; it is not command injection. Whether
    the same call injects a command is answered on its B602/B603/B605 candidate.

    Args:
        site: The flagged call.

    Returns:
        A ``not_vulnerable`` assessment, or None when the node is not a call.
    """
    if not isinstance(site.node, ast.Call):
        return None
    fact = ("The program is started by a partial path, so the PATH search decides which binary runs; "
            "that needs control of PATH, which an attacker of this code does not get from its inputs, "
            "and the injection question for this call is judged on its own candidate (B602/B603/B605).")
    return Assessment(verdict="not_vulnerable", confidence=7, cwe=CWE, facts=(fact,),
                      signals={"sink": "argv", "source": "constant", "sanitised": False, "partial_path": True})
