"""Builds each hostile repository of docs/security.md and prints a table attack -> result.

    python bench/hostile.py [--sandbox bubblewrap,gvisor,none] [--keep DIR]

Every attack is a repository (or a workspace) built here in a temporary folder and scanned with
the real CLI in a real process. A row says what the attack tried and what happened; "held"
means the attack was refused or harmless, nothing outside the workspace changed, no marker file
appeared, and the planted vulnerability was still reported. Exit status 1 when any row failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-I", "-c", f"import runpy, sys; sys.path.insert(0, {str(ROOT)!r}); "
       "runpy.run_module('fleetledger.cli', run_name='__main__', alter_sys=True)"]
VULNERABLE = ("import subprocess\nfrom flask import request\n\n\n"
              "def run():\n    return subprocess.check_output('ls ' + request.args['d'], shell=True)\n")
PLANTED = "open({marker!r}, 'w').write('imported')\nraise SystemExit(0)\n"


@dataclass
class Row:
    attack: str
    sandbox: str
    held: bool
    detail: str


def cli(*args: str, cwd: Path, sandbox: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLEETLEDGER_SANDBOX": sandbox}
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def repo_at(root: Path, marker: Path) -> Path:
    repo = root / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "views.py").write_text(VULNERABLE)
    for name in ("json", "ast", "bandit"):
        (repo / f"{name}.py").write_text(PLANTED.format(marker=str(marker)))
    return repo


def tree(root: Path) -> dict[str, str]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            out[str(path)] = os.readlink(path) if path.is_symlink() else (path.read_text(errors="replace")
                                                                        if path.is_file() else "/")
    return out


def found(ws: Path) -> list[str]:
    try:
        return [f["candidate"]["path"] for f in json.loads((ws / "findings.json").read_text())["findings"]]
    except (OSError, ValueError, KeyError):
        return []


def scan_elsewhere(root: Path, repo: Path, sandbox: str) -> tuple[bool, str]:
    ws = root / "ws-elsewhere"
    done = cli("scan", str(repo), "--workspace", str(ws), "--no-progress", "--workers", "2", cwd=repo, sandbox=sandbox)
    paths = found(ws)
    return done.returncode == 0 and "app/views.py" in paths, f"scan elsewhere: exit {done.returncode}, findings {paths}"


def shipped(kind: str) -> Callable[[Path, str], tuple[bool, str]]:
    def attack(root: Path, sandbox: str) -> tuple[bool, str]:
        marker, outside = root / "PWNED", root / "outside"
        outside.mkdir()
        (outside / "victim").write_text("yours")
        repo = repo_at(root, marker)
        run = repo / ".run"
        if kind == "scratch module":
            (run / "scratch").mkdir(parents=True)
            (run / "scratch" / "json.py").write_text(PLANTED.format(marker=str(marker)))
        elif kind == "links":
            run.mkdir()
            for name in ("owner", "lock", "logs", "sprint-plan-state.json"):
                (run / name).symlink_to(outside / "victim")
        else:
            (outside / "policy.toml").write_text('[policy]\negress = ["attacker.example:443"]\n')
            run.symlink_to(outside, target_is_directory=True)
        before = tree(root)
        done = cli("scan", "--no-progress", cwd=repo, sandbox=sandbox)
        untouched = tree(root) == before and not marker.exists()
        ok, detail = scan_elsewhere(root, repo, sandbox)
        return (done.returncode == 2 and untouched and ok and not marker.exists(),
                f"cd repo && scan: exit {done.returncode}, tree {'unchanged' if untouched else 'CHANGED'}; {detail}")
    return attack


def shipped_modules(root: Path, sandbox: str) -> tuple[bool, str]:
    marker = root / "PWNED"
    repo = repo_at(root, marker)
    ok, detail = scan_elsewhere(root, repo, sandbox)
    left = list((root / "ws-elsewhere" / "scratch").iterdir())
    return ok and not marker.exists() and not left, f"{detail}; marker {'PRESENT' if marker.exists() else 'absent'}; scratch left: {len(left)}"


def setuid_scratch(root: Path, sandbox: str) -> tuple[bool, str]:
    sys.path.insert(0, str(ROOT))
    from fleetledger.sandbox import get_sandbox

    scratch = root / "scratch"
    scratch.mkdir()
    code = ("import os; p = os.path.join(os.getcwd(), 'suid'); open(p, 'w').write('x'); os.chmod(p, 0o4755); "
            "print([l.split()[5] for l in open('/proc/self/mountinfo') if l.split()[4] == os.getcwd()])")
    backend = get_sandbox(sandbox)
    launch = backend.wrap([sys.executable, "-I", "-c", code], read_only=[], scratch=scratch)
    done = subprocess.run(launch.argv, env=launch.env, cwd=scratch, capture_output=True, text=True, timeout=300)
    on_host = (scratch / "suid").exists()
    mode = oct((scratch / "suid").stat().st_mode) if on_host else "-"
    held = not on_host or sandbox == "none"  # none: the file is yours, in a 0700 folder removed when the worker ends
    return held, f"setuid file on the host: {'yes, mode ' + mode if on_host else 'no'}; scratch mount {done.stdout.strip() or done.stderr.strip()[-200:]}"


def rewritten(kind: str) -> Callable[[Path, str], tuple[bool, str]]:
    def attack(root: Path, sandbox: str) -> tuple[bool, str]:
        sys.path.insert(0, str(ROOT))
        from fleetledger.ledger.records import GENESIS_HASH, record_hash

        repo = repo_at(root, root / "PWNED")
        ws = root / "ws"
        done = cli("scan", str(repo), "--workspace", str(ws), "--no-progress", "--workers", "1", cwd=root, sandbox=sandbox)
        if done.returncode != 0:
            return False, f"the scan failed: {done.stdout[-300:]} {done.stderr[-300:]}"
        conn = sqlite3.connect(ws / "ledger.sqlite3", isolation_level=None)
        conn.execute("DROP TRIGGER records_no_update")
        conn.execute("DROP TRIGGER records_no_delete")
        if kind == "cut tail":
            conn.execute("DELETE FROM records WHERE seq > (SELECT max(seq) - 3 FROM records)")
        else:
            conn.execute("UPDATE records SET why = 'nothing found' WHERE kind = 'step.done'")
        prev: dict[str, str] = {}
        for row in conn.execute("SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash "
                                "FROM records ORDER BY seq").fetchall():
            seq, run_id, ts_ms, actor, kind_, key, task, epoch, why, payload, policy_hash = row
            digest = record_hash(prev_hash=prev.get(run_id, GENESIS_HASH), seq=seq, run_id=run_id, ts_ms=ts_ms,
                                 actor=actor, kind=kind_, key=key, task=task, epoch=epoch, why=why,
                                 payload_json=payload, policy_hash=policy_hash)
            conn.execute("UPDATE records SET prev_hash = ?, hash = ? WHERE seq = ?",
                         (prev.get(run_id, GENESIS_HASH), digest, seq))
            prev[run_id] = digest
        conn.close()
        checked = cli("verify", "--workspace", str(ws), cwd=root, sandbox=sandbox)
        again = cli("scan", str(repo), "--workspace", str(ws), "--no-progress", cwd=root, sandbox=sandbox)
        problems = sorted((line for line in checked.stdout.splitlines() if line.startswith("problem:")),
                          key=lambda line: "signed head" not in line)  # the head's finding first
        return (checked.returncode == 1 and again.returncode == 1,
                f"verify: exit {checked.returncode}, {problems[:1] or 'no problem found'}; scan again: exit {again.returncode}")
    return attack


def scan_of(build: Callable[[Path], None], check: Callable[[Path, subprocess.CompletedProcess[str]], tuple[bool, str]]
            ) -> Callable[[Path, str], tuple[bool, str]]:
    """An attack that is a repository: ``build`` adds to it, the scan runs, ``check`` judges."""
    def attack(root: Path, sandbox: str) -> tuple[bool, str]:
        repo = repo_at(root, root / "PWNED")
        build(repo)
        ws = root / "ws"
        done = cli("scan", str(repo), "--workspace", str(ws), "--no-progress", "--workers", "2", cwd=root, sandbox=sandbox)
        held, detail = check(ws, done)
        paths = found(ws)
        return (held and "app/views.py" in paths,
                f"exit {done.returncode}; planted finding {'reported' if 'app/views.py' in paths else 'MISSING'}; {detail}")
    return attack


def _deep(repo: Path) -> None:
    folder = repo
    for _ in range(1000):  # one level at a time: mkdir(parents=True) recurses per level
        folder = folder / "d"
        folder.mkdir()
    (folder / "deep.py").write_text("x = 1\n")


def _sparse(repo: Path) -> None:
    with open(repo / "huge.py", "wb") as handle:
        handle.truncate(8 * 1024 ** 3)


def _sinks(repo: Path) -> None:
    body = "".join("    os.system(x)\n" for _ in range(2000))
    (repo / "sinks.py").write_text(f"import os\nfrom flask import request\n\n\ndef view():\n    x = request.args['x']\n{body}")


def _exclude_all(repo: Path) -> None:
    (repo / ".fleetledger.toml").write_text('[rules]\nexclude = ["**"]\n')


def _escapes(repo: Path) -> None:
    (repo / "app" / "\x1b]0;pwned\x07\x1b[2J.py").write_text(VULNERABLE.replace("run()", "run2()") + "# \x1b[2J ALL CLEAR\n")


def _md_says(*needles: str) -> Callable[[Path, subprocess.CompletedProcess[str]], tuple[bool, str]]:
    def check(ws: Path, done: subprocess.CompletedProcess[str]) -> tuple[bool, str]:
        text = (ws / "findings.md").read_text(errors="replace") if (ws / "findings.md").exists() else ""
        missing = [n for n in needles if n not in text]
        return not missing, "findings.md says " + ("what was cut" if not missing else f"nothing of {missing}")
    return check


def _no_raw_escapes(ws: Path, done: subprocess.CompletedProcess[str]) -> tuple[bool, str]:
    text = (ws / "findings.md").read_text(errors="replace") if (ws / "findings.md").exists() else ""
    raw = [c for c in ("\x1b", "\x07", "\x9b") if c in text + done.stdout + done.stderr]
    return not raw and "\\x1b" in text, f"raw control characters in findings.md or the terminal: {len(raw)}"


ATTACKS: dict[str, Callable[[Path, str], tuple[bool, str]]] = {
    "1. shipped .run/scratch/json.py": shipped("scratch module"),
    "2. symlinks planted in .run/": shipped("links"),
    "2. .run -> folder elsewhere with policy.toml": shipped("dir link"),
    "3. setuid binary left in scratch": setuid_scratch,
    "4. json.py/ast.py/bandit.py in the repository (the current folder)": shipped_modules,
    "5. records edited and re-chained": rewritten("rechain"),
    "5. last records deleted, re-chained": rewritten("cut tail"),
    "6. folders nested 1,000 deep": scan_of(_deep, _md_says("nested deeper than")),
    "6. an 8 GiB sparse .py": scan_of(_sparse, _md_says("huge.py", "size limit")),
    "6. 2,000 sinks of one value in one file": scan_of(_sinks, _md_says("not reported")),
    "7. .fleetledger.toml exclude = [\"**\"]": scan_of(_exclude_all, _md_says("Exclusions", "refused")),
    "8. escape sequences in a file name and a snippet": scan_of(_escapes, _no_raw_escapes),
}


def remove_tree(root: Path) -> None:
    """Removes ``root`` without recursion (``shutil.rmtree`` recurses once per level, and one
    attack nests 1,000 folders), never following a link."""
    stack = [str(root)]
    while stack:
        with os.scandir(stack[-1]) as listing:
            entries = list(listing)
        folders = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if folders:
            stack += folders
        else:
            os.rmdir(stack.pop())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default="bubblewrap,gvisor,none", help="comma-separated backends")
    parser.add_argument("--keep", type=Path, default=None, help="keep the built repositories under DIR")
    args = parser.parse_args()
    rows = []
    base = args.keep or Path(tempfile.mkdtemp(prefix="fleetledger-hostile-"))
    for sandbox in args.sandbox.split(","):
        for n, (name, attack) in enumerate(ATTACKS.items()):
            root = base / sandbox / f"{n:02d}"
            root.mkdir(parents=True)
            try:
                held, detail = attack(root, sandbox)
            except Exception as exc:  # a row that crashed is a failed row, with the reason
                held, detail = False, f"{type(exc).__name__}: {exc}"
            rows.append(Row(name, sandbox, held, detail))
            print(f"| {name} | {sandbox} | {'held' if held else 'FAILED'} | {detail} |", flush=True)
    if args.keep is None:
        remove_tree(base)
    failed = [r for r in rows if not r.held]
    print(f"\n{len(rows) - len(failed)}/{len(rows)} held")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
