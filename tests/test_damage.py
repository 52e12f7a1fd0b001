"""A damaged ledger is detected before it is trusted, and `salvage` keeps what can be read
(issue 14, item 3). Real SQLite files damaged with real bytes: 4 KiB of NULs over a page of the
main file, and over a WAL frame of a ledger whose coordinator was killed (so the WAL holds
committed frames that no checkpoint has copied yet)."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest

from fleetledger.jobs.synthetic import deliveries, step_value
from fleetledger.ledger import Record, open_storage
from fleetledger.verify import verify_records

from e2e import run_cli, run_synthetic

pytestmark = pytest.mark.slow

TASKS, STEPS = 30, 30
DAMAGED = 65
"""``fleetledger``'s exit code for a damaged ledger (``errors.LedgerDamagedError``)."""
NUL_BLOCK = b"\0" * 4096


def _all_records(db: Path) -> list[Record]:
    with open_storage(f"sqlite:///{db}") as store:
        return list(store.read())


def _fingerprint(ws: Path) -> dict[str, str]:
    """The bytes of the ledger and its side files (a command that appended or checkpointed changes them)."""
    files = [ws / "ledger.sqlite3", ws / "ledger.sqlite3-wal"]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.exists() and p.stat().st_size}


def _leaf_ranges(db: Path) -> list[tuple[int, int, int]]:
    """``(page, first seq, last seq)`` of each leaf page of the records table, in key order (the
    oracle: seqs are contiguous from 1, so leaf k holds the next ``ncell`` of them)."""
    conn = sqlite3.connect(db)
    try:
        leaves = conn.execute("SELECT pageno, ncell FROM dbstat WHERE name = 'records' AND pagetype = 'leaf' "
                              "ORDER BY path").fetchall()
    finally:
        conn.close()
    out, seq = [], 1
    for page, cells in leaves:
        out.append((page, seq, seq + cells - 1))
        seq += cells
    return out


def _finished_run(ws: Path) -> None:
    done = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--workers", "2", "--sandbox", "none")
    assert done.returncode == 0, done.stderr


def _steps(ws: Path) -> dict[str, str]:
    return {r.key.split("@")[0]: r.payload["result"]["value"] for r in _all_records(ws / "ledger.sqlite3")
            if r.kind == "step.done"}


def _expected() -> dict[str, str]:
    return {f"t{t:04d}/s{n}": step_value(f"t{t:04d}", n) for t in range(TASKS) for n in range(STEPS)}


COMMANDS = [("verify",), ("status",), ("log",), ("audit", "x.py"), ("resume", "--sandbox", "none")]


def _every_command_refuses(ws: Path, *needles: str, job: tuple[str, ...] = ("--tasks", str(TASKS), "--steps", str(STEPS))) -> None:
    before = _fingerprint(ws)
    for command in COMMANDS:
        done = run_cli(*command, "--workspace", str(ws))
        said = done.stdout + done.stderr
        assert done.returncode == DAMAGED, f"{command}: exit {done.returncode}: {said}"
        assert "Traceback" not in said, f"{command}: {said}"
        assert "damaged" in said and "fleetledger salvage" in said, f"{command}: {said}"
        for needle in needles:
            assert re.search(needle, said), f"{command} does not name {needle!r}: {said}"
        assert _fingerprint(ws) == before, f"{command} changed the ledger's files (an append, a checkpoint)"
    again = run_synthetic(ws, *job, "--sandbox", "none")
    assert again.returncode == DAMAGED and "Traceback" not in again.stderr, again.stderr
    assert _fingerprint(ws) == before, "the job command again appended to the damaged ledger"


def _damage_main_page(ws: Path) -> tuple[int, int, int]:
    db = ws / "ledger.sqlite3"
    leaves = _leaf_ranges(db)
    page, first, last = leaves[len(leaves) // 2]
    with open(db, "r+b") as handle:
        handle.seek((page - 1) * 4096)
        handle.write(NUL_BLOCK)
    return page, first, last


def test_nul_page_in_main_file_every_command_refuses_and_names_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _finished_run(ws)
    page, first, last = _damage_main_page(ws)
    _every_command_refuses(ws, f"page {page} of the records table", f"unreadable records: seq {first}-{last}\\.")


def test_salvage_after_a_damaged_page_keeps_every_readable_record_and_the_run_finishes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _finished_run(ws)
    truth = _all_records(ws / "ledger.sqlite3")
    page, first, last = _damage_main_page(ws)
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"seq {first}-{last}" in done.stdout and "unreadable" in done.stdout, done.stdout
    kept = _all_records(ws / "ledger.sqlite3")
    assert [r.hash for r in kept[:-1]] == [r.hash for r in truth[: first - 1]], "the ledger up to the loss, exactly"
    note = kept[-1]
    assert (note.kind, note.actor, note.payload["salvage"]["kept_upto"]) == ("decision", "salvage", first - 1), \
        "then one record says the run lost records (its effects are settled with their target before they are done)"
    report = json.loads((ws / "salvage.json").read_text())
    assert report["kept"] == [1, first - 1] and report["unreadable"] == [[first, last]]
    aside = [json.loads(line) for line in Path(report["after_loss_file"]).read_text().splitlines()]
    assert [r["hash"] for r in aside] == [r.hash for r in truth[last:]], "every readable record after the loss kept aside"
    damaged = Path(report["damaged_kept_in"])
    assert (damaged / "ledger.sqlite3").is_file(), "the damaged ledger is kept aside, never deleted"
    assert run_cli("verify", "--workspace", str(ws)).returncode == 0
    resumed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--sandbox", "none")
    assert resumed.returncode == 0, resumed.stderr
    assert _steps(ws) == _expected(), "the run redid what was lost and finished with the same results"
    assert verify_records(_all_records(ws / "ledger.sqlite3")).ok


WIDE = ("--tasks", "150", "--steps", "4")
"""A run whose checkpoints are longer than a page: SQLite stores each one's row partly on
overflow pages."""


def _last_overflow_pages(db: Path) -> dict[int, int]:
    """``{seq: page}``: the last overflow page of each record whose row spilled (the oracle is
    SQLite's dbstat: an overflow page's path is its leaf's path, the cell's index and the page's
    place in the chain; seqs are contiguous from 1 in leaf order)."""
    conn = sqlite3.connect(db)
    try:
        leaves = conn.execute("SELECT path, ncell FROM dbstat WHERE name = 'records' AND pagetype = 'leaf' "
                              "ORDER BY path").fetchall()
        overflow = conn.execute("SELECT path, pageno FROM dbstat WHERE name = 'records' AND pagetype = 'overflow' "
                                "ORDER BY path").fetchall()
    finally:
        conn.close()
    first, seq = {}, 1
    for path, cells in leaves:
        first[path] = seq
        seq += cells
    out = {}
    for path, page in overflow:  # in chain order: the last one of a cell wins
        leaf, _, cell = path.rpartition("/")
        out[first[leaf + "/"] + int(cell.partition("+")[0], 16)] = page
    return out


def test_a_record_whose_last_overflow_page_was_overwritten_is_refused_then_salvaged(tmp_path: Path) -> None:
    """NULs over the last overflow page of a long record: the page has no structure beyond a zero
    "next page" number, so SQLite's quick_check passes. Found by the record's hash at open (it
    used to be read as whole: the command failed later with a JSON error, or used the damaged
    text), reported with its seq, and salvaged like any other loss."""
    ws = tmp_path / "ws"
    done = run_synthetic(ws, *WIDE, "--workers", "2", "--sandbox", "none")
    assert done.returncode == 0, done.stderr
    truth = _all_records(ws / "ledger.sqlite3")
    seq, page = max(_last_overflow_pages(ws / "ledger.sqlite3").items())
    with open(ws / "ledger.sqlite3", "r+b") as handle:
        handle.seek((page - 1) * 4096)
        handle.write(NUL_BLOCK)
    with sqlite3.connect(ws / "ledger.sqlite3") as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok", "the damage this test is about"
    _every_command_refuses(ws, rf"records at seq {seq}, stored partly on overflow pages", job=WIDE)
    salvaged = run_cli("salvage", "--workspace", str(ws))
    assert salvaged.returncode == 0, salvaged.stdout + salvaged.stderr
    report = json.loads((ws / "salvage.json").read_text())
    assert report["kept"] == [1, seq - 1] and report["corrupt"] == [seq], report
    kept = [r for r in _all_records(ws / "ledger.sqlite3") if r.actor != "salvage"]
    assert [r.hash for r in kept] == [r.hash for r in truth[: seq - 1]]
    resumed = run_synthetic(ws, *WIDE, "--sandbox", "none")
    assert resumed.returncode == 0, resumed.stderr
    assert run_cli("verify", "--workspace", str(ws)).returncode == 0


def _records_as_committed(ws: Path, copy: Path) -> list[Record]:
    """Every committed record, read from a copy of the ledger and its WAL (reading the ledger
    itself would checkpoint the WAL into the main file when the connection closes)."""
    copy.mkdir()
    for path in ws.glob("ledger.sqlite3*"):
        (copy / path.name).write_bytes(path.read_bytes())
    return _all_records(copy / "ledger.sqlite3")


def _killed_run_with_wal(ws: Path) -> None:
    """A run killed after many commits: its WAL holds committed frames not yet checkpointed."""
    crashed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--workers", "2", "--sandbox", "none",
                            env={"FLEETLEDGER_FAULT": "ledger.after_commit:25:kill"})
    assert crashed.returncode == -9, crashed.stderr
    assert (ws / "ledger.sqlite3-wal").stat().st_size > 64 * 4120


def _damage_wal(ws: Path) -> int:
    """NULs over a 4 KiB block of the WAL in its middle (a frame's page and the next frame's header)."""
    wal = ws / "ledger.sqlite3-wal"
    offset = wal.stat().st_size // 2 // 4096 * 4096
    with open(wal, "r+b") as handle:
        handle.seek(offset)
        handle.write(NUL_BLOCK)
    return (offset - 32) // 4120


def test_nul_block_in_wal_every_command_refuses_and_nothing_is_checkpointed_away(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _killed_run_with_wal(ws)
    frame = _damage_wal(ws)
    _every_command_refuses(ws, rf"the WAL \S+ is damaged at frames? {frame}\b", r"unreadable records: seq \d+|every record still reads back")


def test_salvage_after_a_damaged_wal_frame_reports_exactly_what_was_lost(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _killed_run_with_wal(ws)
    truth = _records_as_committed(ws, tmp_path / "copy")
    _damage_wal(ws)
    as_sqlite = tmp_path / "as-sqlite"
    as_sqlite.mkdir()
    for path in ws.glob("ledger.sqlite3*"):
        (as_sqlite / path.name).write_bytes(path.read_bytes())
    conn = sqlite3.connect(as_sqlite / "ledger.sqlite3")
    sqlite_keeps = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    conn.close()
    assert sqlite_keeps < len(truth), "SQLite alone drops the committed frames after the damaged one"
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((ws / "salvage.json").read_text())
    kept = [r for r in _all_records(ws / "ledger.sqlite3") if r.actor != "salvage"]  # the loss is noted after them
    assert [r.hash for r in kept] == [r.hash for r in truth[: len(kept)]]
    aside = [json.loads(line) for line in Path(report["after_loss_file"]).read_text().splitlines()]
    unreadable = {seq for a, b in report["unreadable"] for seq in range(a, b + 1)}
    by_seq = {r.seq: r for r in truth}
    assert all(by_seq[r["seq"]].hash == r["hash"] for r in aside), "what is kept aside is what was committed"
    assert {r.seq for r in kept} | {r["seq"] for r in aside} | unreadable == set(by_seq), \
        "every committed record is kept, kept aside, or reported lost"
    assert report["kept"] == [1, len(kept)] and len(kept) >= sqlite_keeps, "salvage keeps at least what SQLite reads"
    for run, ranges in report["lost_by_run"].items():
        assert all(re.fullmatch(r"\d+(-\d+)?", part) for part in ranges), ranges
    resumed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--sandbox", "none")
    assert resumed.returncode == 0, resumed.stderr
    assert _steps(ws) == _expected()
    assert run_cli("verify", "--workspace", str(ws)).returncode == 0


def test_wal_frames_already_dropped_leave_the_ledger_behind_its_head_and_every_command_says_so(tmp_path: Path) -> None:
    """The loss of the WAL case made permanent: the frames after an early commit are gone and a
    checkpoint by a tool that opened the ledger with SQLite alone copied what was left. The file
    is whole again, but shorter than the head this user signed."""
    ws = tmp_path / "ws"
    _killed_run_with_wal(ws)
    signed = json.loads((ws / "sprint-plan-state.json").read_text())["ledger"]["head"]["seq"]
    main, raw = (ws / "ledger.sqlite3").read_bytes(), (ws / "ledger.sqlite3-wal").read_bytes()
    (ws / "ledger.sqlite3-shm").unlink()
    for end in range(32 + 4120, len(raw) + 1, 4120):
        if int.from_bytes(raw[end - 4120 + 4:end - 4120 + 8], "big"):  # a commit frame: the WAL ends after it
            (ws / "ledger.sqlite3").write_bytes(main)
            (ws / "ledger.sqlite3-wal").write_bytes(raw[:end])
            conn = sqlite3.connect(ws / "ledger.sqlite3")
            left = conn.execute("SELECT count(*) FROM records").fetchone()[0]
            conn.close()  # the last connection checkpoints: the loss is now permanent
            if left:
                break
    assert 0 < left < signed
    before = _fingerprint(ws)
    for command in COMMANDS:
        done = run_cli(*command, "--workspace", str(ws))
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "Traceback" not in said, f"{command}: {said}"
        assert re.search(rf"seq {signed}\b", said) and ("cut" in said or "gone" in said), f"{command}: {said}"
        assert _fingerprint(ws) == before, f"{command} appended to a ledger behind its head"
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0 and f"its signed head was at seq {signed}" in done.stdout, done.stdout + done.stderr
    resumed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--sandbox", "none")
    assert resumed.returncode == 0, resumed.stderr
    assert _steps(ws) == _expected()
    assert run_cli("verify", "--workspace", str(ws)).returncode == 0


def test_a_ledger_without_its_first_page_is_refused_then_salvaged_whole(tmp_path: Path) -> None:
    """Page 1 holds SQLite's header and the schema: without it SQLite calls the file "not a
    database". Every command says the ledger is damaged (not "not a ledger"), and salvage rebuilds
    page 1 from the ledger's own schema, so no record is lost."""
    ws = tmp_path / "ws"
    _finished_run(ws)
    truth = _all_records(ws / "ledger.sqlite3")
    with open(ws / "ledger.sqlite3", "r+b") as handle:
        handle.write(NUL_BLOCK)
    _every_command_refuses(ws, "page 1 \\(the file's header and the schema\\)")
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0 and "rebuilt from the ledger's own schema" in done.stdout, done.stdout + done.stderr
    assert [r.hash for r in _all_records(ws / "ledger.sqlite3")] == [r.hash for r in truth], "nothing lost"
    assert run_cli("verify", "--workspace", str(ws)).returncode == 0


def test_effects_whose_records_were_lost_are_settled_with_their_target_not_repeated(tmp_path: Path) -> None:
    """A run killed while publishing (some tickets opened, their records committed), then the
    page holding those records is lost to damage: after salvage the ledger no longer knows the
    tickets were opened. The resumed run asks the target first (the effect's reconcile hook)
    instead of opening them again: no ticket is opened twice."""
    ws, target = tmp_path / "ws", tmp_path / "target"
    args = ("--tasks", str(TASKS), "--steps", str(STEPS), "--workers", "2", "--sandbox", "none", "--target", str(target))
    killed = run_synthetic(ws, *args, env={"FLEETLEDGER_FAULT": "effect.after_intent:6:kill"})
    assert killed.returncode == -9, killed.stderr
    assert sum(deliveries(target).values()) == 5
    checkpointed = run_cli("verify", "--workspace", str(ws))  # a read: leaves the WAL as it is
    assert checkpointed.returncode == 0, checkpointed.stdout + checkpointed.stderr
    with sqlite3.connect(ws / "ledger.sqlite3") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as a clean shutdown would: the pages are in the main file
    first_effect = next(r.seq for r in _all_records(ws / "ledger.sqlite3") if r.kind == "effect.intent")
    page = next(p for p, lo, hi in _leaf_ranges(ws / "ledger.sqlite3") if lo <= first_effect <= hi)
    with open(ws / "ledger.sqlite3", "r+b") as handle:
        handle.seek((page - 1) * 4096)
        handle.write(NUL_BLOCK)
    assert run_cli("salvage", "--workspace", str(ws)).returncode == 0
    assert not [r for r in _all_records(ws / "ledger.sqlite3") if r.kind.startswith("effect.")], "their records are gone"
    resumed = run_synthetic(ws, *args)
    assert resumed.returncode == 0, resumed.stderr
    assert deliveries(target) == {f"publish:t{t:04d}": 1 for t in range(TASKS)}, "every ticket opened exactly once"
    reconciled = [r for r in _all_records(ws / "ledger.sqlite3") if r.kind == "effect.done" and "reconciled" in r.why]
    assert len(reconciled) == 5
    assert verify_records(_all_records(ws / "ledger.sqlite3")).ok


def test_effects_of_a_run_salvage_kept_nothing_of_are_settled_with_their_target_not_repeated(tmp_path: Path) -> None:
    """Regression (chaos scenario synthetic:nul:1:200): a finished run, then the page holding its
    first records is lost, so salvage keeps none of its records and the same command starts a
    new run. Its effects may all have happened under the lost run: it asks the target first
    (and notes the salvage once; a later run performs its effects as usual)."""
    ws, target = tmp_path / "ws", tmp_path / "target"
    args = ("--tasks", "4", "--steps", "3", "--workers", "2", "--sandbox", "none", "--target", str(target))
    assert run_synthetic(ws, *args).returncode == 0
    with sqlite3.connect(ws / "ledger.sqlite3") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    run_id = _all_records(ws / "ledger.sqlite3")[0].run_id
    leaves = _leaf_ranges(ws / "ledger.sqlite3")
    assert len(leaves) > 1, "records after the damaged page read back, so salvage can name their run"
    page = next(p for p, lo, hi in leaves if lo <= 1 <= hi)
    with open(ws / "ledger.sqlite3", "r+b") as handle:
        handle.seek((page - 1) * 4096)
        handle.write(NUL_BLOCK)
    assert run_cli("salvage", "--workspace", str(ws)).returncode == 0
    assert _all_records(ws / "ledger.sqlite3") == [], "salvage kept nothing (the prefix ends before seq 1)"
    again = run_synthetic(ws, *args)
    assert again.returncode == 0, again.stderr
    assert deliveries(target) == {f"publish:t{t:04d}": 1 for t in range(4)}, "every ticket opened exactly once"
    records = _all_records(ws / "ledger.sqlite3")
    notes = [r for r in records if r.kind == "decision" and "salvage" in r.payload]
    assert len(notes) == 1 and notes[0].payload["salvage"]["runs"] == [run_id] and "kept no record" in notes[0].why
    assert len([r for r in records if r.kind == "effect.done" and "reconciled" in r.why]) == 4
    assert verify_records(records).ok
    later = run_synthetic(ws, *args, "--name", "another")  # another job in the workspace: a new run
    assert later.returncode == 0, later.stderr
    records = _all_records(ws / "ledger.sqlite3")
    assert len([r for r in records if r.kind == "decision" and "salvage" in r.payload]) == 1, "noted once"
    assert deliveries(target) == {f"publish:t{t:04d}": 2 for t in range(4)}, "a new run's effects are its own"


def test_a_damaged_root_page_costs_no_record_that_a_whole_leaf_holds(tmp_path: Path) -> None:
    """NULs over the root page of the records table: SQLite can reach no row below it, but the
    leaves are whole. Salvage reads them page by page and keeps every record."""
    ws = tmp_path / "ws"
    _finished_run(ws)
    truth = _all_records(ws / "ledger.sqlite3")
    with sqlite3.connect(ws / "ledger.sqlite3") as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'records'").fetchone()[0]
    with open(ws / "ledger.sqlite3", "r+b") as handle:
        handle.seek((root - 1) * 4096)
        handle.write(NUL_BLOCK)
    _every_command_refuses(ws, f"[Pp]age {root}")
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0 and "nothing was lost" in done.stdout, done.stdout + done.stderr
    assert [r.hash for r in _all_records(ws / "ledger.sqlite3")] == [r.hash for r in truth]


def test_a_wal_with_a_damaged_header_is_refused_and_salvaged(tmp_path: Path) -> None:
    """NULs over the WAL's first 4 KiB (its header and most of its first frame): SQLite would
    ignore the whole WAL, dropping every transaction committed since the last checkpoint, with
    no error. Every command refuses; salvage reads the frames without the header and keeps every
    committed record; the run finishes with the results of an uninterrupted one."""
    ws = tmp_path / "ws"
    _killed_run_with_wal(ws)
    truth = _records_as_committed(ws, tmp_path / "copy")
    with open(ws / "ledger.sqlite3-wal", "r+b") as handle:
        handle.write(NUL_BLOCK)
    _every_command_refuses(ws, "damaged header", "silently drop")
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0, done.stdout + done.stderr
    kept = [r for r in _all_records(ws / "ledger.sqlite3") if r.actor != "salvage"]
    assert [r.hash for r in kept] == [r.hash for r in truth[: len(kept)]]
    report = json.loads((ws / "salvage.json").read_text())
    lost = {seq for a, b in report["unreadable"] for seq in range(a, b + 1)} | set(
        seq for a, b in report["after_loss"] for seq in range(a, b + 1))
    assert {r.seq for r in kept} | lost == {r.seq for r in truth}, "every committed record kept or reported lost"
    resumed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--sandbox", "none")
    assert resumed.returncode == 0, resumed.stderr
    assert _steps(ws) == _expected()


def test_salvage_never_keeps_part_of_a_plan(tmp_path: Path) -> None:
    """A sprint's plan (its ``sprint.started`` and every ``task.planned``) is one transaction;
    a salvage that kept the records before a damaged one would keep part of it, and the sprint
    would run with the tasks that happened to survive (or none, finished at once). Salvage cuts
    before the plan instead, and the resumed run plans it again: every step is done."""
    ws = tmp_path / "ws"
    killed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--sandbox", "none",
                           env={"FLEETLEDGER_FAULT": "coordinator.after_plan:1:kill"})
    assert killed.returncode == -9, killed.stderr
    records = _all_records(ws / "ledger.sqlite3")
    started = next(r for r in records if r.kind == "sprint.started")
    assert started.payload["batch"] == TASKS + 1, "the plan is marked as one batch"
    with sqlite3.connect(ws / "ledger.sqlite3") as conn:  # one record of the plan no longer matches its hash
        trigger = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'records_no_update'").fetchone()[0]
        conn.execute("DROP TRIGGER records_no_update")  # a flipped bit does not ask the trigger
        conn.execute("UPDATE records SET why = 'damaged' WHERE seq = ?", (started.seq + 2,))
        conn.execute(trigger)
    done = run_cli("salvage", "--workspace", str(ws))
    assert done.returncode == 0, done.stdout + done.stderr
    kept = [r for r in _all_records(ws / "ledger.sqlite3") if r.actor != "salvage"]
    assert kept[-1].seq == started.seq - 1, "cut before the plan, not inside it"
    resumed = run_synthetic(ws, "--tasks", str(TASKS), "--steps", str(STEPS), "--sandbox", "none")
    assert resumed.returncode == 0, resumed.stderr
    assert _steps(ws) == _expected()
