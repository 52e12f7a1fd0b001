"""The coordinator's reading of worker output: complete lines only, JSON objects only.

Regression: a taken-over worker that wrote a line of invalid UTF-8 (``json.loads`` of bytes
raised UnicodeDecodeError, which the pool did not catch) or a JSON value that is not an object
(``[1]``: the coordinator's ``message.get`` raised AttributeError) stopped the coordinator.
"""

from __future__ import annotations

from fleetledger.pool import take_messages


def test_complete_lines_are_taken_and_the_rest_is_kept() -> None:
    buffer = bytearray(b'{"op":"ready"}\n{"op":"record","kind":"step.done"}\n{"op":"hea')
    assert take_messages(buffer) == [{"op": "ready"}, {"op": "record", "kind": "step.done"}]
    assert buffer == bytearray(b'{"op":"hea')
    assert take_messages(buffer) == [] and buffer == bytearray(b'{"op":"hea')
    buffer += b'rtbeat"}\n'
    assert take_messages(buffer) == [{"op": "heartbeat"}] and buffer == bytearray()


def test_lines_that_are_not_json_objects_are_dropped() -> None:
    buffer = bytearray(b'{\xff}\n\xc3\n\xff\xfe\n[1]\n42\n"x"\nnull\n\nnot json\n{"op":"ready"}\n{"a":"\\u00e9"}\n')
    assert take_messages(buffer) == [{"op": "ready"}, {"a": "é"}]
    assert buffer == bytearray()
