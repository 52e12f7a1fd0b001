"""Untrusted text shown safely (issue 13 item 8): a table of characters a terminal or viewer
would act on, each of which must come out as a visible escape, and the reports that use it."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from fleetledger.display import json_text, printable
from fleetledger.jobs.scan import export
from fleetledger.jobs.scan.markdown import to_markdown
from fleetledger.jobs.scan.shapes import FileReport, ModelAnswer
from fleetledger.report_html import _e

from test_export import candidate, finding, report

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                 "\ud800-\udfff\U000e0000-\U000e007f]")
"""What no display output may hold: every escaped character but newline and tab."""

HOSTILE = [
    ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),   # OSC: retitle the window
    ("\x1b[2J", "\\x1b[2J"),                      # CSI: clear the screen
    ("\x9b2J", "\\x9b2J"),                        # C1 CSI
    ("a\rALL CLEAR", "a\\x0dALL CLEAR"),          # carriage return: overwrite the line
    ("\x7f\x00", "\\x7f\\x00"),
    ("x\u202etxt.py", "x\\u202etxt.py"),          # right-to-left override (CVE-2021-42574)
    ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),  # bidi isolates
    ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),  # bidi marks
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
    ("line\u2028sep\u2029", "line\\u2028sep\\u2029"),
    ("tag\U000e0041", "tag\\U000e0041"),
    ("c_\udcff.py", "c_\\udcff.py"),              # a name that is not UTF-8
    ("ordinary: é ü 中文 \\d \t\n", "ordinary: é ü 中文 \\d \t\n"),  # left alone
]


@pytest.mark.parametrize("raw, shown", HOSTILE)
def test_printable_escapes_what_a_display_acts_on(raw: str, shown: str) -> None:
    assert printable(raw) == shown
    assert printable(shown) == shown, "idempotent"
    assert not RAW.search(printable(raw))


def test_newline_and_tab_are_kept_only_when_asked() -> None:
    assert printable("a\nb\tc") == "a\nb\tc"
    assert printable("a\nb\tc", keep="") == "a\\x0ab\\x09c"


def test_every_control_and_format_character_of_this_python_is_escaped() -> None:
    for code in range(0x110000):
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            assert printable(chr(code), keep="") != chr(code), hex(code)


def test_json_text_is_the_same_data_with_no_raw_control_character() -> None:
    data = {"path": "".join(raw for raw, _ in HOSTILE), "list": ["\x9b", "\U000e0041"]}
    for indent in (None, 2):
        text = json_text(json.dumps(data, ensure_ascii=False, indent=indent))
        assert json.loads(text) == data
        assert not RAW.search(text)


NAME = "app/x\x1b]0;pwned\x07\x1b[2J\x9b\u202etxt.py"
SNIPPET = 'os.system("ls " + arg)  # \x1b[2J\x1b]0;ALL CLEAR\x07 \u202e\r\n'


def hostile_report():
    c = candidate(path=NAME, snippet=SNIPPET)
    f = finding(c, rationale="Input\x1b[2J reaches\u2066 a shell.\x9b")
    skipped = FileReport(path="b\x1b[2J.py", sha256="0" * 64, size_bytes=1, status="skipped", reason="NUL\x07 byte")
    return report([f], files=(FileReport(path=NAME, sha256="0" * 64, size_bytes=1, status="scanned",
                                         candidates=(c,), warnings=("line 2\x1b[31m",)), skipped))


def test_markdown_shows_hostile_names_snippets_and_answers_escaped() -> None:
    text = to_markdown(hostile_report())
    assert not RAW.search(text)
    assert "x\\\\x1b\\]0;pwned\\\\x07\\\\x1b\\[2J\\\\x9b\\\\u202etxt.py:3:1" in text, "the finding is still named"
    assert 'os.system("ls " + arg)  # \\x1b[2J\\x1b]0;ALL CLEAR\\x07 \\u202e\n' in text, "the snippet, escaped"
    assert "b\\\\x1b\\[2J.py" in text and "NUL\\\\x07 byte" in text


def test_json_and_sarif_keep_the_exact_text_and_hold_no_raw_control_character(tmp_path) -> None:
    scan = hostile_report()
    export.write_outputs(scan, tmp_path)
    for name in ("findings.json", "findings.sarif"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert not RAW.search(text), name
    data = json.loads((tmp_path / "findings.json").read_text(encoding="utf-8"))
    assert data["findings"][0]["candidate"]["path"] == NAME and data["findings"][0]["candidate"]["snippet"] == SNIPPET
    sarif = json.loads((tmp_path / "findings.sarif").read_text(encoding="utf-8"))
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["snippet"]["text"] == SNIPPET


def test_html_escaping_shows_control_and_bidi_characters() -> None:
    shown = _e(NAME + "<script>")
    assert not RAW.search(shown) and "&lt;script&gt;" in shown
    assert shown.startswith("app/x\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\u202etxt.py")


def test_model_verdicts_are_validated_so_markdown_never_shows_a_raw_one() -> None:
    with pytest.raises(ValueError):
        ModelAnswer(verdict="vulnerable\x1b[2J", confidence=5, cwe=None, rationale="")  # type: ignore[arg-type]
