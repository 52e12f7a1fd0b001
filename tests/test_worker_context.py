"""Large context values go to each worker once (``pool.WorkerProc.compact`` and
``worker.resolve``): the repository listing a detect task carries is not re-sent, re-parsed and
re-hashed for every task."""

from __future__ import annotations

import subprocess

import pytest

from fleetledger.pool import WorkerProc
from fleetledger.worker import resolve


def test_a_large_value_is_sent_once_then_named_and_the_worker_hands_out_the_same_object() -> None:
    worker = WorkerProc(id="w01", proc=subprocess.Popen.__new__(subprocess.Popen))
    listing = {f"pkg/m{n}.py": f"{n:064x}" for n in range(100)}
    context = {"root": "/srv/repo", "shas": listing}
    first = worker.compact(context, {"shas": "d1"})
    second = worker.compact(context, {"shas": "d1"})
    assert first["shas"] == {"$value": listing, "$digest": "d1"} and first["root"] == "/srv/repo"
    assert second["shas"] == {"$same": "d1"}
    held: dict = {}
    one = resolve(first, held)
    two = resolve(second, held)
    assert one["shas"] == listing and two["shas"] is one["shas"]
    changed = worker.compact({"shas": {"other.py": "0" * 64}}, {"shas": "d2"})
    assert "$value" in changed["shas"]


def test_a_name_the_worker_never_received_is_refused() -> None:
    with pytest.raises(KeyError, match="does not hold"):
        resolve({"shas": {"$same": "d9"}}, {"shas": ("d1", {})})
