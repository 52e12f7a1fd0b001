"""Attacks on the fix sprint (issue 18): a hostile repository, a hostile model's patch, a careless
user. Each test is a regression test of a defect found and fixed."""

from __future__ import annotations

import json
from pathlib import Path

from e2e import count, run_cli

VIEWS = '''\
import yaml
from flask import Flask, request

app = Flask(__name__)


@app.route("/conf")
def conf():
    return repr(yaml.load(request.data))
'''


def _scan_package(tmp_path: Path) -> tuple[Path, Path, str]:
    """A scan with --fix of ``repo/pkg/views.py``: (repository, workspace, the finding's id)."""
    repo, ws = tmp_path / "repo", tmp_path / "ws"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "views.py").write_text(VIEWS)
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--fix", "--no-progress")
    assert done.returncode == 0, done.stderr
    shown = json.loads((ws / "findings.json").read_text())["findings"]
    fid = next(f["candidate"]["id"] for f in shown if (f.get("fix") or {}).get("validation", {}).get("ok"))
    return repo, ws, fid


def test_patch_apply_refuses_a_file_reached_through_a_folder_replaced_by_a_link(tmp_path: Path) -> None:
    repo, ws, fid = _scan_package(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\nwrite = ["$WORKSPACE/**", "$TARGET/**"]\n')
    assert run_cli("approve", "--workspace", str(ws), "--effect", f"patch-apply:{fid}", "--reason", "ok").returncode == 0
    # since the scan, the package folder became a link to a folder outside the repository
    outside = tmp_path / "outside"
    (repo / "pkg").rename(outside)
    (repo / "pkg").symlink_to(outside, target_is_directory=True)
    refused = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert refused.returncode == 75 and "link" in refused.stderr, refused.stderr
    assert (outside / "views.py").read_text() == VIEWS, "nothing is written outside the repository"
    assert count(ws, "effect.intent", f"patch-apply:{fid}") == 0
