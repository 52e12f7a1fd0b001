"""The run's signed head (``heads``): a regression of the four-host test, where a host's
``recover`` read the run's end, then the head another live host had signed since, and took the
run for cut (exit 65)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleetledger import heads
from fleetledger.ledger import NewRecord, open_storage


@pytest.fixture()
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def test_a_head_signed_after_the_end_was_read_is_no_contradiction(tmp_path: Path, state_home: Path) -> None:
    key = os.urandom(32)
    with open_storage(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as store:
        first = store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why="one")], now_ms=1)
        read_end = first[0].record.seq  # what a recovering host read
        later = store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why="two")], now_ms=2)
        record = later[0].record  # appended and signed by another live host meanwhile
        head = heads.sign("r", record.seq, record.hash, key)
        assert heads.contradiction(store, store.url, "r", read_end, key, head) is None
        cut = heads.sign("r", record.seq + 5, record.hash, key)
        assert "ends at seq" in (heads.contradiction(store, store.url, "r", record.seq, key, cut) or "")
        rewritten = heads.sign("r", record.seq, "0" * 64, key)
        assert "differs" in (heads.contradiction(store, store.url, "r", record.seq, key, rewritten) or "")


def test_every_test_keeps_its_heads_in_a_folder_of_its_own(own_state_folder: Path) -> None:
    # Regression: heads were kept in the user's own state folder, keyed by the ledger's path, so
    # a head left there by an earlier suite run at a reused temporary path made `verify` report
    # this run's records as removed.
    assert heads.state_folder().is_relative_to(own_state_folder)
    assert not heads.state_folder().is_relative_to(Path.home() / ".local" / "state")
