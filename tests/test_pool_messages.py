"""The coordinator's reading of worker output: complete lines only, JSON objects only.

Regression: a taken-over worker that wrote a line of invalid UTF-8 (``json.loads`` of bytes
raised UnicodeDecodeError, which the pool did not catch) or a JSON value that is not an object
(``[1]``: the coordinator's ``message.get`` raised AttributeError) stopped the coordinator.
"""

from __future__ import annotations

from fleetledger.pool import MAX_DEPTH, WorkerProc, take_messages, too_deep
from fleetledger.run.workers import _payload_text


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


def test_a_payload_nested_deeper_than_a_reader_can_take_is_refused_where_it_would_be_stored() -> None:
    """A payload nested 900 deep decodes at the top of the coordinator's stack but would fail
    to encode in the ledger's append, or later in any reader: the coordinator refuses it when
    it encodes it (``_payload_text``); one nested as deep as ``MAX_DEPTH`` is stored."""
    def line(depth: int) -> bytes:  # a payload ``depth`` deep: its object, then lists
        return b'{"op":"record","payload":{"result":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}}\n"

    worker = WorkerProc("w01", None)  # type: ignore[arg-type]
    deep, ready = take_messages(bytearray(line(900) + b'{"op":"ready"}\n'))
    assert ready == {"op": "ready"}
    assert _payload_text(worker, deep["payload"]) == (None, f"worker w01 sent a payload nested deeper than {MAX_DEPTH} levels")
    [kept] = take_messages(bytearray(line(MAX_DEPTH)))
    text, problem = _payload_text(worker, kept["payload"])
    assert problem is None and text and not too_deep(kept["payload"]) and too_deep(kept["payload"], MAX_DEPTH - 1)


def test_a_message_spread_over_lines_is_checked_for_its_whole_depth() -> None:
    """Regression (found attacking the depth limit): lines of 60 "[" each, decoded together as
    one array, made one message 900 deep that no single line's count revealed; its depth is
    judged where it would be stored, whole."""
    lines = [b'{"op":"record","payload":{"x":' + b"[" * 60 + b"0"] + [b"[" * 60 + b"0"] * 14
    lines.append(b"0" + b"]" * (60 * 15) + b"}}")
    [message] = take_messages(bytearray(b"\n".join(lines) + b"\n"))
    assert _payload_text(WorkerProc("w01", None), message["payload"])[0] is None  # type: ignore[arg-type]


def test_a_refused_field_nested_a_thousand_deep_is_shown_without_recursion() -> None:
    """The denial record shows a refused field (``_shown``); ``repr`` of a list nested past
    the interpreter's recursion limit raised RecursionError there."""
    from fleetledger.run.workers import _shown

    value: list = []
    for _ in range(5000):
        value = [value]
    assert _shown(value).startswith("[[[") and len(_shown(value)) <= 200


def test_a_key_nested_a_thousand_deep_is_refused_without_recursion() -> None:
    """Regression: the refusal of a key that is no step's quoted it with ``repr``, which raised
    RecursionError for a key nested past the interpreter's recursion limit."""
    from fleetledger.run.workers import _worker_overreach

    key: list = []
    for _ in range(5000):
        key = [key]
    worker = WorkerProc("w01", None)  # type: ignore[arg-type]
    worker.assigned[("t", 1)] = None
    problem = _worker_overreach(worker, {"op": "record", "kind": "step.intent", "task": "t", "epoch": 1, "key": key,
                                         "why": "", "payload": {}}, 0)
    assert problem is not None and "is not a step of its task" in problem


def test_an_op_that_is_not_text_is_refused_and_a_made_up_op_is_ignored() -> None:
    """Regression (found re-reading the change): a non-text op was turned into an internal
    "malformed" message whose ``why`` the refusal quoted, so a worker that sent that op itself,
    with a ``why`` nested 5,000 deep, raised RecursionError there. A non-text op is refused
    directly; an op the protocol does not have is ignored, as before."""
    from types import SimpleNamespace

    from fleetledger.run.workers import WorkersMixin

    why: list = []
    for _ in range(5000):
        why = [why]
    killed: list[str] = []
    worker = WorkerProc("w01", SimpleNamespace(kill=lambda: killed.append("w01")))  # type: ignore[arg-type]
    made: list[tuple[str, str]] = []
    host = SimpleNamespace(_reserved={}, _overreach=None,
                           new_record=lambda kind, why="", payload=None, **_: made.append((kind, why)) or (kind, why))
    batch: list = []
    WorkersMixin._on_message(host, worker, {"op": "malformed", "why": why}, batch)  # type: ignore[arg-type]
    assert batch == [] and not worker.rejected
    WorkersMixin._on_message(host, worker, {"op": [1], "why": why}, batch)  # type: ignore[arg-type]
    assert worker.rejected and killed == ["w01"]
    assert made == [("policy.denied", "worker w01 sent a message whose op is not text ([1])")]


def test_the_coordinator_collects_young_objects_less_and_restores_the_callers_thresholds() -> None:
    import gc

    from fleetledger.run.gc_threshold import YOUNG_COLLECTION_THRESHOLD, young_objects_collected_less

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with young_objects_collected_less():
            assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(YOUNG_COLLECTION_THRESHOLD * 3, 5, 5)  # a caller's higher threshold is never lowered
        try:
            with young_objects_collected_less():
                assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD * 3, 5, 5)
                raise KeyError("the block fails")
        except KeyError:
            pass
        assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD * 3, 5, 5)
    finally:
        gc.set_threshold(*before)
