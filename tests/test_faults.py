"""The named crash points themselves: occurrence counting, once and forever, once across processes."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleetledger import faults


@pytest.fixture(autouse=True)
def _disarm():
    yield
    faults.arm(None)


def test_acts_at_the_nth_occurrence_then_disarms() -> None:
    faults.arm("p:3:eio")
    faults.hit("p")
    faults.hit("other")
    faults.hit("p")
    with pytest.raises(OSError) as info:
        faults.hit("p")
    assert info.value.errno == errno.EIO
    faults.hit("p")  # once: disarmed after acting


def test_forever_keeps_failing() -> None:
    faults.arm("p:2:enospc+")
    faults.hit("p")
    for _ in range(3):
        with pytest.raises(OSError) as info:
            faults.hit("p")
        assert info.value.errno == errno.ENOSPC


def test_after_counts_only_the_occurrences_past_another_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEETLEDGER_FAULT", "p:2:eio")
    monkeypatch.setenv("FLEETLEDGER_FAULT_AFTER", "gate")
    faults.rearm()
    for _ in range(5):
        faults.hit("p")  # before the gate: not counted, however many
    faults.hit("gate")
    faults.hit("p")
    with pytest.raises(OSError) as info:
        faults.hit("p")
    assert info.value.errno == errno.EIO
    monkeypatch.delenv("FLEETLEDGER_FAULT_AFTER")
    faults.rearm()


def test_point_names_may_hold_colons() -> None:
    faults.arm("scan.detect:pkg/a.py:1:eio")
    faults.hit("scan.detect:pkg/b.py")
    with pytest.raises(OSError):
        faults.hit("scan.detect:pkg/a.py")
    faults.arm("scan.detect:x.py:2")
    faults.hit("scan.detect:x.py")


@pytest.mark.parametrize("spec", ["p", "p:x:kill", "p:1:explode", "p:kill"])
def test_malformed_specs_are_refused(spec: str) -> None:
    with pytest.raises(ValueError):
        faults.arm(spec)


def test_kill_is_a_real_sigkill_and_once_file_limits_it_to_one_process(tmp_path: Path) -> None:
    code = "from fleetledger import faults\nfaults.hit('p')\nprint('survived')\n"
    env = {**os.environ, "FLEETLEDGER_FAULT": "p:1:kill", "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == -9 and first.stdout == ""
    assert second.returncode == 0 and second.stdout.strip() == "survived"


def test_forever_under_once_keeps_acting_in_the_process_that_acted_first(tmp_path: Path) -> None:
    """``enospc+`` with a once file (as the chaos harness arms it): the process that acted first
    goes on failing at every later occurrence (the disk stays full there); before, its own once
    file disarmed it after the first, so "stays full" meant "fails once"."""
    code = ("from fleetledger import faults\nfails = 0\nfor _ in range(4):\n    try:\n        faults.hit('p')\n"
            "    except OSError:\n        fails += 1\nprint(fails)\n")
    env = {**os.environ, "FLEETLEDGER_FAULT": "p:2:enospc+", "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert first.stdout.strip() == "3", first.stdout + first.stderr
    assert second.stdout.strip() == "0", "another process carries on"


def test_star_with_a_counter_acts_at_the_kth_event_of_all_processes(tmp_path: Path) -> None:
    """Issue 17: ``*:K:kill`` with a counter file kills at the K-th point reached by any of the
    processes sharing the counter: three processes of 4 hits each, K = 7, so the second process
    dies at its 3rd hit, the first ran all its 4 and the third, past K once the fault fired,
    carries on (its first hit finds the once file and disarms it)."""
    code = ("import sys\nfrom fleetledger import faults\nfor i in range(4):\n    faults.hit(f'p{i}')\n"
            "    print(i, flush=True)\n")
    env = {**os.environ, "FLEETLEDGER_FAULT": "*:7:kill", "FLEETLEDGER_FAULT_COUNTER": str(tmp_path / "counter"),
           "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
            for _ in range(3)]
    assert [r.returncode for r in runs] == [0, -9, 0]
    assert runs[0].stdout.split() == ["0", "1", "2", "3"] and runs[1].stdout.split() == ["0", "1"]
    assert (tmp_path / "once").exists() and (tmp_path / "counter").stat().st_size == 4 + 3 + 1
