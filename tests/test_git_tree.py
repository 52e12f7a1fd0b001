"""``scan --baseline REF``: a commit's tree written out by git plumbing (``jobs/scan/git_tree.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fleetledger.errors import UsageError
from fleetledger.jobs.scan import git_tree


def test_a_commit_tree_is_written_out_without_links_dot_dot_or_git_folders(tmp_path: Path) -> None:
    """``--baseline REF``'s tree (``git_tree``): a crafted tree (``git mktree`` takes "..",
    ".GIT" and links) gives only its regular files, inside the folder asked for."""
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is needed for --baseline REF")
    repo = tmp_path / "repo"
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

    def run(*args: str, data: bytes | None = None) -> str:
        return subprocess.run([git, "-C", str(repo), *args], input=data, env=env, check=True,
                              capture_output=True).stdout.decode().strip()

    repo.mkdir()
    run("init", "-q")
    blob = run("hash-object", "-w", "--stdin", data=b"import os\nos.system(x)\n")
    inner = run("mktree", data=f"100644 blob {blob}\tpasswd\n".encode())
    tree = run("mktree", data=(f"100644 blob {blob}\t..\n100644 blob {blob}\t.GIT\n040000 tree {inner}\t.git\n"
                               f"120000 blob {blob}\tlink.py\n100755 blob {blob}\tok.py\n040000 tree {inner}\tsub\n").encode())
    commit = run("-c", "user.name=t", "-c", "user.email=t@e", "commit-tree", tree, "-m", "crafted")
    assert git_tree.commit_of(repo, commit[:10]) == commit
    written, left_out = git_tree.materialise(repo, commit, tmp_path / "out" / "tree")
    files = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files == ["tree/ok.py", "tree/sub/passwd"] and (written, left_out) == (2, 4)
    assert not any(p.is_symlink() for p in (tmp_path / "out").rglob("*"))
    for bad in ("", "--output=/tmp/x", "no-such-ref"):
        with pytest.raises(UsageError, match="no such file, and no commit of that name"):
            git_tree.commit_of(repo, bad)
