"""Issue 13: a hostile repository cannot run code, hide its findings, touch the host or rewrite
history. Each attack is a repository built here; the attack must be refused or harmless,
nothing outside the workspace may change, and the planted vulnerability is still reported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fleetledger import errors, fsutil
from fleetledger.workspace import Workspace

from e2e import BOOTS_A_VM, run_cli

pytestmark = pytest.mark.slow

SANDBOXES = ["bubblewrap", "gvisor", "none", pytest.param("microvm", marks=BOOTS_A_VM)]

VULNERABLE = ("import subprocess\nfrom flask import request\n\n\n"
              "def run():\n    return subprocess.check_output('ls ' + request.args['d'], shell=True)\n")

HIDE_FINDINGS = ("import os, sys\n"
                 "open({marker!r}, 'w').write('imported ' + __name__)\n"
                 "sys.exit(0)  # a worker that imports this dies before scanning anything\n")
"""A module the repository plants under a library's name: importing it leaves a marker (when it
can write there) and ends the process, so no finding is reported."""


def make_repo(root: Path, marker: Path) -> Path:
    """A repository with one planted vulnerability and modules named like the libraries a
    worker imports."""
    repo = root / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "views.py").write_text(VULNERABLE, encoding="utf-8")
    for name in ("json", "ast", "bandit", "fleetledger"):
        (repo / f"{name}.py").write_text(HIDE_FINDINGS.format(marker=str(marker)), encoding="utf-8")
    return repo


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ``root`` (but ``skip``): kind and content, links not followed."""
    seen: dict[str, tuple[str, bytes | str]] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if skip is not None and here.is_relative_to(skip):
            continue
        for name in dirs + files:
            path = here / name
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path))
            elif path.is_file():
                seen[str(path)] = ("file", path.read_bytes())
            elif path.is_dir():
                seen[str(path)] = ("dir", "")
    return seen


def findings(workspace: Path) -> list[dict]:
    return json.loads((workspace / "findings.json").read_text(encoding="utf-8"))["findings"]


def _scratch_module(run: Path, outside: Path) -> None:
    (run / "scratch").mkdir(parents=True)
    (run / "scratch" / "json.py").write_text("raise SystemExit(0)\n")


def _wider_policy(run: Path, outside: Path) -> None:
    run.mkdir()
    (run / "policy.toml").write_text('[policy]\negress = ["attacker.example:443"]\n')


def _links_to_the_host(run: Path, outside: Path) -> None:
    run.mkdir()
    for name in ("owner", "lock", "logs", "sprint-plan-state.json"):
        (run / name).symlink_to(outside / name)


def _link_elsewhere(run: Path, outside: Path) -> None:
    (outside / "policy.toml").write_text('[policy]\negress = ["attacker.example:443"]\n')
    run.symlink_to(outside, target_is_directory=True)


def _empty(run: Path, outside: Path) -> None:
    run.mkdir()


def _forged_mark(run: Path, outside: Path) -> None:
    run.mkdir()
    (run / "owner").write_text("0" * 64 + "\n")


SHIPPED = {"a scratch module": _scratch_module, "a wider policy": _wider_policy, "an empty folder": _empty,
           "links to the host": _links_to_the_host, "a link to a folder elsewhere": _link_elsewhere,
           "a forged owner mark": _forged_mark}


@pytest.mark.parametrize("shipped", SHIPPED, ids=list(SHIPPED))
def test_a_shipped_workspace_is_refused_before_anything_in_it_is_touched(tmp_path: Path, shipped: str) -> None:
    """Attacks 1 and 2: ``cd repo && fleetledger scan`` with a ``.run/`` the repository shipped
    (whatever it holds, or a ``.run`` link to a folder elsewhere) is refused, and nothing in it or
    outside it is read into the run, opened for writing or changed."""
    marker, outside = tmp_path / "PWNED", tmp_path / "outside"
    outside.mkdir()
    (outside / "logs").mkdir()
    for name in ("owner", "lock", "sprint-plan-state.json"):
        (outside / name).write_text("the user's own file\n")
    repo = make_repo(tmp_path, marker)
    SHIPPED[shipped](repo / ".run", outside)
    before = snapshot(tmp_path)
    for command in (["scan", "--no-progress"], ["resume"], ["recover"]):
        refused = run_cli(*command, cwd=repo)
        if shipped == "an empty folder" and command[0] != "scan":  # nothing in it to trust or to resume
            assert refused.returncode == 1 and "no ledger in" in refused.stderr, (command, refused.stderr)
            continue
        assert refused.returncode == 2, (command, refused.stdout + refused.stderr)
        assert "nothing in it was read" in refused.stderr, refused.stderr
    assert snapshot(tmp_path) == before, "the refused workspace, or something outside it, changed"
    assert not marker.exists()
    elsewhere = run_cli("scan", str(repo), "--workspace", str(tmp_path / "ws"), "--no-progress", cwd=repo)
    assert elsewhere.returncode == 0, elsewhere.stdout + elsewhere.stderr
    assert [f["candidate"]["path"] for f in findings(tmp_path / "ws")] == ["app/views.py"]
    assert not marker.exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_modules_the_repository_ships_are_never_imported_by_a_worker(tmp_path: Path, sandbox: str) -> None:
    """Attack 4 (and 1 under every sandbox): the worker starts in isolated mode in an empty
    scratch folder, so ``json.py``, ``ast.py`` or ``bandit.py`` in the repository, which is also
    the user's current folder here, are not imported; the finding is reported; the scratch
    folders are gone when the run ends."""
    marker = tmp_path / "PWNED"
    repo = make_repo(tmp_path, marker)
    ws = tmp_path / "ws"
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "2", "--no-progress",
                   env={"FLEETLEDGER_SANDBOX": sandbox}, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [f["candidate"]["path"] for f in findings(ws)] == ["app/views.py"]
    assert not marker.exists(), marker.read_text()
    assert list((ws / "scratch").iterdir()) == [], "scratch was left behind"
    assert (ws / "scratch").stat().st_mode & 0o777 == 0o700


def test_a_link_planted_later_in_a_workspace_made_here_is_never_followed(tmp_path: Path) -> None:
    """Attack 2, inside a workspace the user made in the checkout (a ``git pull`` can add
    files there): a link at a workspace file or folder is refused, never written through."""
    marker = tmp_path / "PWNED"
    repo = make_repo(tmp_path, marker)
    first = run_cli("scan", "--no-progress", "--workers", "1", cwd=repo)
    assert first.returncode == 0, first.stdout + first.stderr
    run = repo / ".run"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("the user's own file\n")
    for name in ("lock", "logs", "scratch"):
        entry = run / name
        if entry.is_dir():
            for child in entry.iterdir():
                child.unlink()
            entry.rmdir()
        else:
            entry.unlink()
        entry.symlink_to(outside / "victim" if name == "lock" else outside)
        before = snapshot(outside)
        again = run_cli("scan", "--new", "--no-progress", "--workers", "1", cwd=repo)
        assert again.returncode == 2, (name, again.stdout + again.stderr)
        assert "symbolic link" in again.stderr and name in again.stderr, again.stderr
        assert snapshot(outside) == before, f"written through the planted {name} link"
        entry.unlink()
        if name != "lock":
            entry.mkdir(mode=0o700)


def test_workspace_files_are_opened_without_following_links(tmp_path: Path) -> None:
    """The primitives the workspace is written with: a link is an error naming the file, never
    followed; ``atomic_write`` replaces a link instead of writing where it points."""
    victim = tmp_path / "victim"
    victim.write_text("mine")
    (tmp_path / "link").symlink_to(victim)
    with pytest.raises(errors.UsageError, match="is a symbolic link"):
        fsutil.open_nofollow(tmp_path / "link", os.O_WRONLY | os.O_CREAT)
    with pytest.raises(errors.UsageError, match="is a symbolic link"):
        fsutil.private_dir(tmp_path / "link")
    (tmp_path / f".state.{os.getpid()}.tmp").symlink_to(victim)  # a predictable temporary name
    (tmp_path / "state").symlink_to(victim)
    fsutil.atomic_write(tmp_path / "state", b"new")
    assert victim.read_text() == "mine" and not (tmp_path / "state").is_symlink()
    assert (tmp_path / "state").read_bytes() == b"new"


def test_a_new_workspace_appears_whole_and_marked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is made under another name, marked, then renamed into place: a crash (here
    a failing write of the mark) never leaves an unmarked workspace that the next run would
    refuse as shipped."""
    ws = Workspace.at(tmp_path / "repo" / ".run")
    (tmp_path / "repo").mkdir()
    original = Workspace._write_mark

    def crash(self: Workspace, folder: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Workspace, "_write_mark", crash)
    with pytest.raises(OSError):
        ws.ensure()
    assert not (tmp_path / "repo" / ".run").exists(), "an unmarked workspace was left in place"
    assert list((tmp_path / "repo").iterdir()) == [], "the folder made for it was left in the checkout"
    ws.check_made_here([tmp_path / "repo"])  # nothing there: the next run goes on
    monkeypatch.setattr(Workspace, "_write_mark", original)
    ws.ensure()
    ws.check_made_here([tmp_path / "repo"])
    assert (ws.root / "owner").stat().st_size == 65


def _rewrite(ledger: Path, edit) -> None:  # type: ignore[no-untyped-def]
    """What someone who can write the ledger file does: drop the append-only triggers, let
    ``edit(conn)`` change records, then re-chain every record so the unkeyed chain verifies."""
    import sqlite3

    from fleetledger.ledger.records import GENESIS_HASH, record_hash

    conn = sqlite3.connect(ledger, isolation_level=None)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("DROP TRIGGER records_no_delete")
    edit(conn)
    prev: dict[str, str] = {}
    rows = conn.execute("SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash "
                        "FROM records ORDER BY seq").fetchall()
    for seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash in rows:
        before = prev.get(run_id, GENESIS_HASH)
        digest = record_hash(prev_hash=before, seq=seq, run_id=run_id, ts_ms=ts_ms, actor=actor, kind=kind, key=key,
                             task=task, epoch=epoch, why=why, payload_json=payload, policy_hash=policy_hash)
        conn.execute("UPDATE records SET prev_hash = ?, hash = ? WHERE seq = ?", (before, digest, seq))
        prev[run_id] = digest
    conn.close()


def _dismiss_findings(conn) -> None:  # type: ignore[no-untyped-def]
    """Rewrites every revalidation answer to dismiss what it confirmed."""
    rows = conn.execute("SELECT seq, payload FROM records WHERE kind = 'step.done' AND key LIKE 'revalidate%'").fetchall()
    assert rows, "the run recorded no revalidation to rewrite"
    for seq, payload in rows:
        data = json.loads(payload)
        data["result"]["answer"].update(confidence=0, rationale="not exploitable")
        conn.execute("UPDATE records SET payload = ? WHERE seq = ?", (json.dumps(data, sort_keys=True), seq))


def _cut_tail(conn) -> None:  # type: ignore[no-untyped-def]
    """Deletes the last records: ``run.finished`` and what the export recorded before it."""
    last = conn.execute("SELECT max(seq) FROM records").fetchone()[0]
    conn.execute("DELETE FROM records WHERE seq > ?", (last - 3,))


@pytest.mark.parametrize("attack", ["rewritten chain", "cut tail", "edited head", "edited record"])
def test_a_rewritten_history_is_reported_by_verify_and_never_resumed(tmp_path: Path, attack: str) -> None:
    """Attack 5: records edited and re-chained, or the last records deleted, passed ``verify``.
    The run's head is signed under this user's key (which no sandbox sees) and kept outside
    the ledger; ``verify`` reports each change, and a run whose ledger contradicts its head is
    not resumed (nothing is appended to it)."""
    import sqlite3

    repo = make_repo(tmp_path, tmp_path / "PWNED")
    ws = tmp_path / "ws"
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    whole = run_cli("verify", "--workspace", str(ws))
    assert whole.returncode == 0 and "problem" not in whole.stdout and "note" not in whole.stdout, whole.stdout
    ledger = ws / "ledger.sqlite3"
    if attack == "rewritten chain":
        _rewrite(ledger, _dismiss_findings)
        expected = "the chain was rewritten"
    elif attack == "cut tail":
        _rewrite(ledger, _cut_tail)
        expected = "its tail was cut"
    elif attack == "edited head":
        state = json.loads((ws / "sprint-plan-state.json").read_text())
        state["ledger"]["head"]["seq"] += 5
        (ws / "sprint-plan-state.json").write_text(json.dumps(state))
        expected = "does not carry this user's seal"
    else:
        conn = sqlite3.connect(ledger, isolation_level=None)
        conn.execute("DROP TRIGGER records_no_update")
        conn.execute("UPDATE records SET why = 'nothing to see' WHERE kind = 'run.finished'")
        conn.close()
        expected = "it was edited"
    checked = run_cli("verify", "--workspace", str(ws))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert expected in checked.stdout, checked.stdout
    if attack in ("rewritten chain", "cut tail"):
        count = sqlite3.connect(ledger).execute("SELECT count(*) FROM records").fetchone()[0]
        again = run_cli("scan", str(repo), "--workspace", str(ws), "--no-progress")
        assert again.returncode == 1 and "nothing was appended" in again.stderr, again.stdout + again.stderr
        assert sqlite3.connect(ledger).execute("SELECT count(*) FROM records").fetchone()[0] == count


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to another uid with setpriv, which needs root")
def test_an_unconfined_worker_cannot_read_the_coordinators_environment(tmp_path: Path) -> None:
    """Attack 4: under ``--sandbox none`` a worker of the same user read the coordinator's API
    keys through ``/proc/PID/environ``. The coordinator makes itself non-dumpable before it
    starts one. Both processes run here as an unprivileged uid (root could read it anyway)."""
    import subprocess
    import sys

    from e2e import REPO_ROOT

    holder = ("import sys, time; sys.path.insert(0, {root!r}); from fleetledger.sandbox import shield_from_same_user; "
              "{call}; print('up', flush=True); time.sleep(60)")
    drop = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"]
    seen = {}
    for shielded in (False, True):
        call = "assert shield_from_same_user()" if shielded else "pass"
        proc = subprocess.Popen([*drop, sys.executable, "-I", "-c", holder.format(root=str(REPO_ROOT), call=call)],
                                env={"API_KEY": "sk-secret", "PATH": os.environ["PATH"]}, stdout=subprocess.PIPE,
                                cwd="/")
        try:
            assert proc.stdout.readline() == b"up\n"  # type: ignore[union-attr]
            reader = subprocess.run([*drop, sys.executable, "-I", "-c",
                                     f"print(open('/proc/{proc.pid}/environ', 'rb').read())"],
                                    capture_output=True, text=True, cwd="/")
            seen[shielded] = reader.stdout + reader.stderr
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()  # type: ignore[union-attr]
    assert "sk-secret" in seen[False], "the unshielded read should work, else this test proves nothing"
    assert "sk-secret" not in seen[True] and "PermissionError" in seen[True], seen[True]


def test_an_empty_folder_made_by_hand_for_the_workspace_is_used_but_not_one_with_content(tmp_path: Path) -> None:
    """A workspace beside the scanned tree, in the current folder: an empty folder of this user
    (``mkdir ws`` before ``--workspace ws``) holds nothing to trust, so it is used and marked;
    one that already holds something not made here is refused, as inside the target."""
    repo = make_repo(tmp_path, tmp_path / "PWNED")
    (tmp_path / "ws").mkdir()
    done = run_cli("scan", str(repo), "--workspace", "ws", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [f["candidate"]["path"] for f in findings(tmp_path / "ws")] == ["app/views.py"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "policy.toml").write_text('[policy]\negress = ["attacker.example:443"]\n')
    refused = run_cli("scan", str(repo), "--workspace", "other", "--no-progress", cwd=tmp_path)
    assert refused.returncode == 2 and "was not created here" in refused.stderr, refused.stdout + refused.stderr
