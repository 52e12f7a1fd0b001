"""The official SARIF 2.1.0 JSON schema, for tests that check fleetledger's SARIF output.

The schema is not vendored: ``.ci/fetch-sarif-schema`` puts it at ``.cache/sarif-2.1.0.json``
(from Microsoft's SARIF multitool npm package). A missing schema fails the test that needs it,
with the command to run; it never skips, so "valid SARIF" is never claimed unchecked.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match

SCHEMA_ENV = "FLEETLEDGER_SARIF_SCHEMA"
DEFAULT_PATH = Path(__file__).resolve().parents[1] / ".cache" / "sarif-2.1.0.json"

# RFC 3986 §3 and §4.1, without IP-literal hosts (fleetledger writes none): a URI has a scheme;
# a relative reference's first path segment holds no ":"; "#" starts the one fragment.
_CHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})"
_URI = re.compile(rf"[A-Za-z][A-Za-z0-9+.\-]*:{_CHAR}*(?:#{_CHAR}*)?\Z")
_RELATIVE_REF = re.compile(rf"(?![^/?#]*:){_CHAR}*(?:#{_CHAR}*)?\Z")
# RFC 3339 §5.6 date-time.
_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)\Z")


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.match(value):
        return False
    try:
        datetime.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


_FALLBACKS = {
    "uri": lambda v: not isinstance(v, str) or bool(_URI.match(v)),
    "uri-reference": lambda v: not isinstance(v, str) or bool(_URI.match(v) or _RELATIVE_REF.match(v)),
    "date-time": _is_date_time,
}


def load_schema() -> dict[str, Any]:
    """Returns the parsed SARIF 2.1.0 schema.

    Read from ``$FLEETLEDGER_SARIF_SCHEMA`` when set, else ``<repo>/.cache/sarif-2.1.0.json``.

    Returns:
        The schema as a dict (JSON Schema draft 2020-12).

    Raises:
        pytest.fail.Exception: the schema file is missing (the message says to run
            ``.ci/fetch-sarif-schema``).
    """
    return _parsed(_schema_path())


def _schema_path() -> str:
    path = Path(os.environ.get(SCHEMA_ENV) or DEFAULT_PATH)
    if not path.is_file():
        pytest.fail(f"SARIF 2.1.0 schema not found at {path}: run `bash .ci/fetch-sarif-schema` first")
    return str(path)


@functools.cache
def _parsed(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


@functools.cache
def _validator(path: str) -> Draft202012Validator:
    schema = _parsed(path)
    Draft202012Validator.check_schema(schema)
    checker = FormatChecker(Draft202012Validator.FORMAT_CHECKER.checkers)
    for name, check in _FALLBACKS.items():
        if name not in checker.checkers:
            checker.checks(name)(check)
    return Draft202012Validator(schema, format_checker=checker)


def validate(sarif: dict[str, Any]) -> None:
    """Validates a SARIF log against the official schema, formats included.

    jsonschema checks the formats it has libraries for; ``uri``, ``uri-reference`` (RFC 3986)
    and ``date-time`` (RFC 3339) get local checks when it has none.

    Args:
        sarif: The SARIF log as a dict.

    Raises:
        AssertionError: the log is invalid; the message gives the JSON path of the error.
        pytest.fail.Exception: the schema file is missing.
    """
    error = best_match(_validator(_schema_path()).iter_errors(sarif))
    if error is not None:
        raise AssertionError(f"invalid SARIF at {error.json_path}: {error.message}")
