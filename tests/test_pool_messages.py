"""The coordinator's reading of worker output: complete lines only, JSON objects only.

Regression: a taken-over worker that wrote a line of invalid UTF-8 (``json.loads`` of bytes
raised UnicodeDecodeError, which the pool did not catch) or a JSON value that is not an object
(``[1]``: the coordinator's ``message.get`` raised AttributeError) stopped the coordinator.
"""

from __future__ import annotations

from fleetledger.pool import MAX_DEPTH, TOO_DEEP, take_messages, too_deep


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


def test_a_line_nested_past_the_decoders_depth_is_dropped_not_raised() -> None:
    """Regression: a line of 200,000 "[" raised RecursionError out of the coordinator's read
    (one line from a taken-over worker stopped the run)."""
    buffer = bytearray(b"[" * 200_000 + b'\n{"op":"ready"}\n' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n")
    assert take_messages(buffer) == [{"op": "ready"}] and buffer == bytearray()


def test_a_message_nested_deeper_than_a_reader_can_take_is_dropped() -> None:
    """A payload nested 900 deep decodes at the top of the coordinator's stack but would fail
    to encode in the ledger's append, or later in any reader: it is read as ``TOO_DEEP`` (which
    the coordinator refuses); one nested as deep as ``MAX_DEPTH`` is kept."""
    def line(depth: int) -> bytes:
        return b'{"op":"record","payload":{"result":' + b"[" * (depth - 2) + b"]" * (depth - 2) + b"}}\n"

    assert take_messages(bytearray(line(900) + b'{"op":"ready"}\n')) == [TOO_DEEP, {"op": "ready"}]
    kept = take_messages(bytearray(line(MAX_DEPTH)))
    assert len(kept) == 1 and not too_deep(kept[0]) and too_deep(kept[0], MAX_DEPTH - 1)


def test_a_message_spread_over_lines_is_checked_for_its_whole_depth() -> None:
    """Regression (found attacking the depth limit): lines of 60 "[" each, decoded together as
    one array, made one message 900 deep that no single line's count revealed."""
    lines = [b'{"op":"record","payload":{"x":' + b"[" * 60 + b"0"] + [b"[" * 60 + b"0"] * 14
    lines.append(b"0" + b"]" * (60 * 15) + b"}}")
    assert take_messages(bytearray(b"\n".join(lines) + b"\n")) == [TOO_DEEP]
