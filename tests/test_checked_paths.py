"""Checks written on access paths (``checked_paths``) against hostile keys: a key too long, or an
integer whose decimal digits Python refuses to write, is not a path; the file is analysed and the
flow reported, never an exception or a long stall."""

from __future__ import annotations

import pytest

from fleetledger.analysis import engine, parser

_VIEW = '''
from flask import Flask, abort, redirect, request

app = Flask(__name__)


@app.route("/r")
def r():
    if request.args[KEY] not in ("/a", "/b"):
        abort(400)
    return redirect(request.args[KEY])
'''


@pytest.mark.parametrize("key", ["0x" + "f" * 5000, repr("k" * 1_000_000), repr(b"k" * 1_000_000)])
def test_a_hostile_key_is_no_access_path_and_the_flow_is_still_reported(key: str) -> None:
    text = _VIEW.replace("KEY", key)
    result = engine.analyse("app.py", parser.parse_module(text).module)
    assert result.not_analysed == ()
    assert [(f.kind, f.site.line) for f in result.flows] == [("redirect", 11)]


def test_a_short_key_is_an_access_path() -> None:
    text = _VIEW.replace("KEY", '"next"')
    assert engine.analyse("app.py", parser.parse_module(text).module).flows == ()
