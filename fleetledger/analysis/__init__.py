"""Program analysis on the Python syntax tree, used by the offline analyst.

One concept per module:

* ``tree``: the parsed file with parent links, import aliases and position look-ups.
* ``bindings``: reaching definitions of a name, with the checks between definition and use.
* ``taint``: where a value comes from (constant, parameter, outside data, unknown).
* ``sources``: what counts as outside data (web requests, CLI, stdin, env, network).
* ``sinks``: which argument of a dangerous call matters, and what is safe there.
* ``sanitisers`` / ``guards`` / ``patterns``: calls, conditions and regular expressions that
  make a value safe for a sink.
* ``context``: test code, dead code, and a function's callers in its file.
* ``assessment`` and ``checks``: one check per weakness family, turning the facts above into
  a verdict with reasons.

Every walk is iterative and every trace is bounded by a deterministic work budget, so no file
can crash the analysis or make it depend on time.
"""
