"""Program analysis for the scan: a version-independent parser and a taint engine whose
knowledge of libraries is data.

One concept per module:

* ``parser`` / ``tsconvert``: any Python that Python 3.14 accepts, as one ``ast`` tree with
  CPython's positions (the running interpreter's parser first, tree-sitter for newer syntax);
  the converter's parts are ``ts_statements``, ``ts_match``, ``ts_signatures``,
  ``ts_expressions`` and ``ts_strings``, building with ``ts_nodes``.
* ``catalog`` and ``models/*.toml``: the library models (sources, sinks, sanitisers, guards,
  types, checks), one data file per library or framework; ``model_records``: what they become.
* ``values``: the abstract values (labels, steps, constants, per-key items).
* ``definitions``: the modules, functions and classes of the analysed code, as indexed.
* ``program``: the modules reachable from a file, name resolution, and the results.
* ``budget``: the deterministic work budget.
* ``interp``: the flow-sensitive abstract interpreter of one function body, in parts:
  ``interp_statements``, ``interp_expressions``, ``interp_calls``, ``interp_sinks``.
* ``conditions``: what a branch condition proves about a variable (allowlists, checks).
* ``summaries``: what a function does with its parameters, and applying that at a call.
* ``entries``: framework entry points and what their parameters hold.
* ``engine``: analyse one file; ``facts``: what it reports (flows, misuses, evidence).
* ``tree``, ``context``, ``patterns``, ``verdicts``: the offline analyst's view of a candidate
  (test code, dead code, regular-expression alphabets, verdicts from the recorded facts).

Every walk of an unbounded chain is iterative and every analysis is bounded by a deterministic
work budget; what is cut short is reported, never silently skipped.
"""
