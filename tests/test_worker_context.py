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


def test_a_stopped_worker_ends_without_the_interpreters_shutdown_and_keeps_its_log(tmp_path) -> None:
    """A worker leaves by ``os._exit`` once its output is flushed (``worker.main_and_exit``):
    the orderly shutdown of a process holding a scan's syntax trees cost seconds per run. An
    atexit handler, which only an orderly shutdown runs, shows which way it left."""
    import json
    import os
    import sys

    from fleetledger.pool import worker_argv

    (tmp_path / "quiet_job.py").write_text(
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(tmp_path / 'shutdown')!r}, 'w').close())\n"
        "sys.stderr.write('job loaded\\n')\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    with (tmp_path / "worker.log").open("wb") as log, subprocess.Popen(
            worker_argv("w01", "quiet_job", 0), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            env=environment) as proc:
        hello = json.loads(proc.stdout.readline())
        proc.stdin.write(b'{"op": "stop"}\n')
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0 and hello["op"] == "hello"
    assert "job loaded" in (tmp_path / "worker.log").read_text()
    assert not (tmp_path / "shutdown").exists()
