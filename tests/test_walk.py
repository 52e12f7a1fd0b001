"""Issue 13, item 6: a hostile repository must not make the walk (``plan.discover``) or the
read of a file fail or run for hours. Each test builds the hostile repository in ``tmp_path``."""

from __future__ import annotations

import builtins
import hashlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetledger.jobs.scan import modules, plan
from fleetledger.jobs.scan.plan import candidate_blocks
from fleetledger.jobs.scan.shapes import Candidate
from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.plan import PlannedFile, discover

VULNERABLE = "import os, sys\nos.system(sys.argv[1])\n"


def nest(root: Path, depth: int, name: str = "d") -> Path:
    """Makes ``depth`` folders nested in ``root`` (``root/d/d/...``); returns the deepest."""
    deepest = root
    for _ in range(depth):  # one level at a time: mkdir(parents=True) recurses once per level
        deepest = deepest / name
        deepest.mkdir()
    return deepest


def unnest(root: Path, depth: int, name: str = "d") -> None:
    """Removes what ``nest`` made, deepest first, without recursion (``shutil.rmtree`` recurses
    once per level)."""
    for level in range(depth, 0, -1):
        folder = root.joinpath(*[name] * level)
        for entry in os.scandir(folder):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        folder.rmdir()


@pytest.fixture
def deep_repo(tmp_path: Path) -> Iterator[Path]:
    """A repository with a vulnerable file at the top and 1,000 nested folders, a vulnerable
    file at the bottom too."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text(VULNERABLE)
    (nest(repo, 1000) / "bottom.py").write_text(VULNERABLE)
    yield repo
    unnest(repo, 1000)


def test_a_thousand_nested_folders_are_cut_at_the_depth_limit_and_reported(deep_repo: Path) -> None:
    files = discover(deep_repo)
    by_path = {f.path: f for f in files}
    assert by_path["app.py"].sha256 == hashlib.sha256(VULNERABLE.encode()).hexdigest()
    assert by_path["app.py"].skip_reason is None
    cut = "/".join(["d"] * (plan.MAX_DEPTH + 1))
    assert by_path[cut].skip_reason == f"folder not walked: nested deeper than {plan.MAX_DEPTH} levels"
    assert by_path[cut].sha256 == "" and by_path[cut].size_bytes == 0
    assert set(by_path) == {"app.py", cut}


def test_a_folder_at_the_depth_limit_is_still_walked(tmp_path: Path) -> None:
    deepest = nest(tmp_path, plan.MAX_DEPTH)
    (deepest / "ok.py").write_text("x = 1\n")
    try:
        assert [(f.path, f.skip_reason) for f in discover(tmp_path)] == [("/".join(["d"] * plan.MAX_DEPTH) + "/ok.py", None)]
    finally:
        unnest(tmp_path, plan.MAX_DEPTH)


def test_the_walk_lists_a_bounded_number_of_entries_and_reports_the_folders_it_did_not_list(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan, "MAX_WALK_ENTRIES", 10)
    (tmp_path / "a").mkdir()
    for n in range(4):
        (tmp_path / "a" / f"m{n}.py").write_text("x = 1\n")
    (tmp_path / "b").mkdir()
    for n in range(8):
        (tmp_path / "b" / f"m{n}.py").write_text("x = 1\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "m.py").write_text("x = 1\n")
    found = [(f.path, f.skip_reason) for f in discover(tmp_path)]
    cut = "folder not walked: the walk lists at most 10 entries"
    # The root's 3 entries and a's 4 fit; b's 8 would pass the limit: b is reported, not listed;
    # c, whose entry fits, is listed.
    assert found == [*((f"a/m{n}.py", None) for n in range(4)), ("b", cut), ("c/m.py", None)]
    assert discover(tmp_path) == discover(tmp_path)  # deterministic


def test_a_symlink_loop_is_not_followed_and_is_reported(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path)
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    found = discover(tmp_path)
    assert [(f.path, f.skip_reason) for f in found] == [("pkg/loop", plan.LINKED_FOLDER), ("pkg/m.py", None)]


def test_a_link_to_a_folder_is_reported_not_silently_dropped(tmp_path: Path) -> None:
    """Issue 14, item 7: a symbolic link to a folder (here outside the repository) was
    dropped without a word; it is not followed, and it is listed as not scanned."""
    outside, repo = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir()
    repo.mkdir()
    (outside / "secret.py").write_text(VULNERABLE)
    (repo / "vendor").symlink_to(outside, target_is_directory=True)
    (repo / "app.py").write_text("x = 1\n")
    found = {f.path: f for f in discover(repo)}
    assert set(found) == {"app.py", "vendor"}
    assert found["vendor"].link and found["vendor"].skip_reason == plan.LINKED_FOLDER


def sparse(path: Path, size_bytes: int) -> None:
    with open(path, "wb") as handle:
        handle.write(b"import os\n")
    os.truncate(path, size_bytes)


class ReadCounter:
    """Counts the bytes read from files opened through ``open`` and ``os.read``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bytes = 0
        real_open, real_read = builtins.open, os.read
        counter = self

        class Counted(io.BufferedReader):
            def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
                data = super().read(size)
                counter.bytes += len(data)
                return data

        def counted_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
            handle = real_open(file, mode, *args, **kwargs)
            if "b" in mode and "r" in mode and isinstance(handle, io.BufferedReader):
                return Counted(handle.detach())
            return handle

        def counted_read(fd: int, n: int) -> bytes:
            data = real_read(fd, n)
            counter.bytes += len(data)
            return data

        monkeypatch.setattr(builtins, "open", counted_open)
        monkeypatch.setattr(os, "read", counted_read)


EIGHT_GIB = 8 * 1024 ** 3


def test_an_8_gib_sparse_file_is_listed_as_not_scanned_and_never_read(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sparse(tmp_path / "huge.py", EIGHT_GIB)
    (tmp_path / "small.py").write_text(VULNERABLE)
    reads = ReadCounter(monkeypatch)
    files = {f.path: f for f in discover(tmp_path)}
    assert reads.bytes == len(VULNERABLE)  # small.py, hashed; not a byte of huge.py
    assert files["huge.py"] == PlannedFile(path="huge.py", sha256="", size_bytes=EIGHT_GIB,
                                           skip_reason=f"exceeds size limit ({EIGHT_GIB} bytes > {plan.MAX_SOURCE_BYTES})")
    assert files["small.py"].skip_reason is None


def test_detect_reads_nothing_of_a_file_over_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sparse(tmp_path / "huge.py", EIGHT_GIB)
    reads = ReadCounter(monkeypatch)
    report = detect_file(tmp_path, "huge.py")
    content = modules.read_file(tmp_path, "huge.py", plan.MAX_SOURCE_BYTES)
    assert reads.bytes == 0
    assert (report.status, report.reason) == ("skipped", f"exceeds size limit ({EIGHT_GIB} bytes > {plan.MAX_SOURCE_BYTES})")
    assert (content.data, content.size_bytes, content.problem) == (None, EIGHT_GIB, report.reason)


def test_planned_entries_keep_their_earlier_json_form() -> None:
    """A file that is scanned is planned exactly as before (its task's input hash is unchanged)."""
    assert PlannedFile(path="a.py", sha256="ab", size_bytes=2).to_json() == {
        "path": "a.py", "sha256": "ab", "size_bytes": 2, "link": False}
    cut = PlannedFile(path="d", sha256="", size_bytes=0, skip_reason="folder not walked: x")
    assert cut.to_json()["skip_reason"] == "folder not walked: x"
    assert PlannedFile.from_json(cut.to_json()) == cut


def test_a_folder_that_cannot_be_listed_is_reported_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "m.py").write_text("x = 1\n")
    (tmp_path / "ok.py").write_text("x = 1\n")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)  # the tests run as root, whom chmod 000 does not stop
    assert [(f.path, f.skip_reason) for f in discover(tmp_path)] == [
        ("locked", "folder not walked: unreadable: Permission denied"), ("ok.py", None)]


def test_a_file_that_cannot_be_sized_is_reported_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "long.py").write_text("x = 1\n")
    (tmp_path / "ok.py").write_text("x = 1\n")
    real_lstat = Path.lstat

    def lstat(self: Path):  # type: ignore[no-untyped-def]
        if self.name == "long.py":  # as for a path past PATH_MAX, or a file removed meanwhile
            raise OSError(36, "File name too long")
        return real_lstat(self)

    monkeypatch.setattr(Path, "lstat", lstat)
    assert [(f.path, f.skip_reason) for f in discover(tmp_path)] == [
        ("long.py", "unreadable: File name too long"), ("ok.py", None)]


def _planned(*paths: str) -> list[plan.PlannedFile]:
    return [plan.PlannedFile(path=p, sha256="0" * 64, size_bytes=10) for p in sorted(paths)]


def test_small_neighbouring_folders_share_a_detect_task_and_a_large_folder_is_split() -> None:
    locales = [f"locale/{lang}/{name}" for lang in ("de", "fr", "it", "nl", "pt", "ru", "sv", "uk", "zh")
               for name in ("__init__.py", "formats.py")]
    big = [f"views/v{n:02d}.py" for n in range(40)]
    blocks = plan.blocks(_planned(*locales, *big))
    # the locales fill a task to the minimum; the rest run on with the next folder up to the maximum
    assert [len(b) for b in blocks] == [plan.BLOCK_MIN_FILES, plan.BLOCK_FILES, len(locales) + len(big) - plan.BLOCK_MIN_FILES - plan.BLOCK_FILES]
    assert [f.path for b in blocks for f in b] == sorted(locales + big)


def test_candidates_of_small_neighbouring_folders_share_a_task() -> None:
    def candidate(path: str, line: int) -> Candidate:
        return Candidate(id=f"{path}:{line}", path=path, line=line, col=0, end_line=line, rule_id="B101",
                         rule_name="assert_used", detector="bandit", cwe=703, detector_severity="LOW",
                         detector_confidence="HIGH", message="", snippet="", scope="")

    few = [candidate(f"app{n}/views.py", line) for n in range(6) for line in (1, 2, 3)]
    many = [candidate("core/models.py", line) for line in range(1, 31)]
    blocks = candidate_blocks(few + many)
    sizes = [len(b) for b in blocks]
    assert sum(sizes) == len(few) + len(many) and max(sizes) <= plan.BLOCK_CANDIDATES
    assert sizes[0] >= plan.BLOCK_MIN_CANDIDATES, "small folders were merged"
    assert len(blocks) < len({c.path for c in few + many}) + 1
    assert [c.id for b in blocks for c in b] == [c.id for c in sorted(few + many, key=lambda c: (c.path, c.line))]
