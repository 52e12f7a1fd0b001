"""A helper of the analysed code computed for constant arguments where a check needs a constant
(``analysis.helper_constants``): a pattern converted by a helper before it is compiled is still
judged by the backtracking check."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fleetledger.jobs.scan.detect import detect_file

_COMPAT = ('def tobytes(s):\n    if isinstance(s, str):\n        s = s.encode("latin-1")\n    return s\n\n\n'
           'class Text:\n    @staticmethod\n    def tobytes(s):\n        return s.encode("latin-1")\n\n\n'
           'def long(s):\n' + "".join(f"    v{n} = {n}\n" for n in range(30)) + '    return s.encode("latin-1")\n')
_USES = ('import re\nimport sys\nfrom pkg.compat import Text, long, tobytes\n\n'
         'HELPED = re.compile(tobytes(r"(x+)+y"))\n'            # 5: exponential, through the helper
         'SAFE = re.compile(tobytes(r"[a-z]+@[a-z]+"))\n'       # 6: linear
         'KEYWORD = re.compile(pattern=tobytes(r"(p|p)*q"))\n'  # 7: exponential, passed by keyword
         'METHOD = re.compile(Text.tobytes(r"(m+)+n"))\n'       # 8: a method: not computed
         'LONG = re.compile(long(r"(l+)+k"))\n'                 # 9: over MAX_STATEMENTS: not computed
         'VARIABLE = re.compile(tobytes(sys.argv[1]))\n')      # 10: not a constant argument


def _flagged(root: Path) -> list[int]:
    files = {"pkg/__init__.py": "", "pkg/compat.py": _COMPAT, "pkg/uses.py": _USES}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    readable = {p: hashlib.sha256(t.encode()).hexdigest() for p, t in files.items()}
    report = detect_file(root, "pkg/uses.py", readable=readable)
    assert not report.internal_errors
    return sorted(c.line for c in report.candidates if c.rule_id == "FLC-redos")


def test_a_pattern_converted_by_a_helper_for_a_constant_is_judged_as_the_constant(tmp_path: Path) -> None:
    assert _flagged(tmp_path) == [5, 7]
