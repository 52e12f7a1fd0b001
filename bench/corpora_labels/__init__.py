"""Labels and scoring for ``bench/corpora.py``: the per-CWE benchmark on public labelled corpora.

The JSON files here are our labels for the deliberately vulnerable apps (``pygoat.json``,
``vulpy.json``, ``dvpwa.json``); the modules are the measuring instrument, kept apart from the
analyst they judge:

* ``families``: the vulnerability classes in scope and which CWEs belong to each;
* ``expect``: expectations (a file, a statement span, a family, vulnerable or not) read from
  semgrep-rules test annotations, SecurityEval's folders and our JSON labels, and the tune/judge
  split;
* ``score``: findings read from a scan report or bandit's JSON, matched to expectations and
  counted.
"""
