"""Builds the microVM guest from Debian packages and the project's wheels, into the cache.

    python -m fleetledger.sandbox.microvm build [--mirror URL] [--suite NAME] [--rebuild]

Steps, each skipped when its output is already there (``--rebuild`` redoes all):
  1. kernel: Debian's ``linux-image-amd64`` as installed on the host (``/boot/vmlinuz-*``),
     decompressed once when it can be booted directly (PVH);
  2. initramfs: busybox-static, that kernel's modules for virtio, 9p, ext4 and overlay, ``/init``
     (with 1., redone when the kernel or fleetledger's source changed);
  3. base.img: ``debootstrap --variant=minbase --include=python3`` of the host's Debian suite,
     trimmed (no docs, locales, apt lists), as a read-only ext4 image;
  4. app.img: ``pip wheel`` of fleetledger and its dependencies, installed into an ext4 image
     with the guest agent; rebuilt whenever fleetledger's source changes.
It needs root (debootstrap) and the packages ``qemu-system-x86 busybox-static debootstrap
linux-image-amd64``; the wheels come from the package index pip is configured with.
"""

from __future__ import annotations

import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import initramfs
from .images import GUEST_AGENT, GUEST_SITE, PROJECT_DIR, GuestFiles, source_digest

DEFAULT_MIRROR = "http://deb.debian.org/debian"
BUSYBOX = Path("/bin/busybox")
PACKAGES = "qemu-system-x86 busybox-static debootstrap linux-image-amd64"
TRIM = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "var/lib/apt/lists",
        "var/cache/apt", "var/cache/debconf", "var/log", "etc/hostname", "etc/resolv.conf")
"""Parts of the debootstrapped tree the guest does not need (debootstrap copies the last two
from the host: the guest has no network, and learns nothing of the host's names)."""

IMAGE_SLACK_BYTES = 64 * 1024 * 1024
AGENT_SOURCES = (Path(__file__).with_name("guest_init.py"), Path(__file__).with_name("channel.py"),
                 Path(__file__).parent.with_name("sockets.py"))
"""The guest's pid 1 and the egress channel it loads (standalone files), copied side by side into app.img."""


class BuildError(RuntimeError):
    """The guest cannot be built; the message says what is missing and how to get it."""


@dataclass(frozen=True, kw_only=True)
class BuildOptions:
    """How to build: the Debian ``mirror`` and ``suite`` of base.img, and ``rebuild`` all parts."""

    mirror: str = DEFAULT_MIRROR
    suite: str = ""
    rebuild: bool = False


def host_suite() -> str:
    """Returns the host's Debian codename (``bookworm``), the default suite of the guest."""
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        return "bookworm"
    match = re.search(r"^VERSION_CODENAME=(\S+)$", text, re.MULTILINE)
    return match.group(1) if match else "bookworm"


def newest_kernel() -> tuple[Path, Path]:
    """Returns ``(vmlinuz, modules folder)`` of the newest Debian kernel installed on the host.

    Raises:
        BuildError: no kernel with its modules is installed.
    """
    found = []
    for vmlinuz in Path("/boot").glob("vmlinuz-*"):
        release = vmlinuz.name.removeprefix("vmlinuz-")
        modules = Path("/lib/modules") / release
        if (modules / "modules.dep").is_file():
            found.append((tuple(int(n) for n in re.findall(r"\d+", release)), vmlinuz, modules))
    if not found:
        raise BuildError(f"no Debian kernel with modules in /boot and /lib/modules: apt-get install {PACKAGES}")
    _, vmlinuz, modules = max(found)
    return vmlinuz, modules


def bootable_kernel(vmlinuz: Path) -> bytes:
    """Returns the kernel QEMU boots fastest: the uncompressed ELF inside ``vmlinuz`` when the
    kernel can be entered directly (``CONFIG_PVH``) and its payload is xz or gzip, else
    ``vmlinuz`` as it is (it boots too, through its own decompressor).

    Under emulation that decompressor costs seconds at every boot; decompressing once here
    saves them.
    """
    data = vmlinuz.read_bytes()
    config = vmlinuz.with_name(vmlinuz.name.replace("vmlinuz-", "config-"))
    if not config.is_file() or "CONFIG_PVH=y" not in config.read_text(errors="replace").splitlines():
        return data
    decoders = ((b"\xfd7zXZ\x00", lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ)),
                (b"\x1f\x8b\x08", lambda: zlib.decompressobj(wbits=31)))
    for magic, decoder in decoders:
        start = data.find(magic)
        if start < 0:
            continue
        try:
            elf = decoder().decompress(data[start:])
        except (lzma.LZMAError, zlib.error):
            continue
        if elf.startswith(b"\x7fELF"):
            return elf
    return data


def build(files: GuestFiles, options: BuildOptions, log: Callable[[str], None] = print) -> None:
    """Builds whatever part of the guest is missing or stale into ``files.root``.

    Args:
        files: Where the guest's parts go.
        options: Mirror, suite, and whether to rebuild everything.
        log: Receives one line per step.

    Raises:
        BuildError: a tool or package is missing, the build is not run as root, or a step failed.
    """
    for tool in ("debootstrap", "mke2fs"):
        if shutil.which(tool) is None:
            raise BuildError(f"`{tool}` is missing: apt-get install {PACKAGES} e2fsprogs")
    if not BUSYBOX.is_file():
        raise BuildError(f"{BUSYBOX} (busybox-static) is missing: apt-get install {PACKAGES}")
    files.root.mkdir(parents=True, exist_ok=True)
    manifest = {} if options.rebuild else files.read_manifest()
    vmlinuz, modules = newest_kernel()
    release = vmlinuz.name.removeprefix("vmlinuz-")
    digest = source_digest()
    fresh = manifest.get("source_digest") == digest
    if not fresh or manifest.get("kernel") != release or not files.kernel.is_file() or not files.initramfs.is_file():
        log(f"kernel {release}; initramfs with {', '.join(initramfs.MODULES)}")
        _replace(files.kernel, bootable_kernel(vmlinuz))
        _replace(files.initramfs, initramfs.build(BUSYBOX, modules))
        manifest["kernel"] = release
    suite = options.suite or host_suite()
    if options.rebuild or manifest.get("suite") != suite or not files.base.is_file():
        if os.geteuid() != 0:
            raise BuildError("building base.img runs debootstrap, which needs root: run the build as root")
        log(f"base.img: debootstrap {suite} from {options.mirror} (a few minutes)")
        manifest["python"] = _build_base(files.base, suite, options.mirror)
        manifest["suite"] = suite
    if not fresh or not files.app.is_file():
        log("app.img: pip wheel of fleetledger and its dependencies")
        _build_app(files.app, manifest["python"])
        manifest["source_digest"] = digest
    _replace(files.manifest, json.dumps(manifest, indent=1, sort_keys=True).encode())
    log(f"guest ready in {files.root}")


def _build_base(image: Path, suite: str, mirror: str) -> str:
    """Debootstraps ``suite`` with Python 3 into ``image``; returns the guest's ``X.Y`` Python."""
    with tempfile.TemporaryDirectory(prefix="fleetledger-base-") as tmp:
        tree = Path(tmp) / "root"
        _run(["debootstrap", "--variant=minbase", "--include=python3", suite, str(tree), mirror])
        for part in TRIM:
            path = tree / part
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        pythons = sorted(p.name for p in (tree / "usr/bin").glob("python3.*") if re.fullmatch(r"python3\.\d+", p.name))
        if not pythons:
            raise BuildError(f"debootstrap of {suite} holds no python3.X interpreter")
        _ext4(image, tree, "fl-base")
    return pythons[-1].removeprefix("python")


def _build_app(image: Path, guest_python: str) -> None:
    """Installs fleetledger's wheel and its dependencies' wheels, and the guest agent with its
    egress channel, into ``image``.

    Raises:
        BuildError: the guest's Python differs from this one (the wheels would not fit), or
            there is no source checkout to build the wheel from.
    """
    host_python = f"{sys.version_info.major}.{sys.version_info.minor}"
    if guest_python != host_python:
        raise BuildError(f"the guest has Python {guest_python} but the wheels are built with {host_python}: "
                         "run the build with a Python of the guest's version, or --suite of a matching release")
    if not (PROJECT_DIR / "pyproject.toml").is_file():
        raise BuildError(f"no pyproject.toml in {PROJECT_DIR}: build the guest from a source checkout")
    with tempfile.TemporaryDirectory(prefix="fleetledger-app-") as tmp:
        wheels, tree = Path(tmp) / "wheels", Path(tmp) / "root"
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
        _run([*pip, "wheel", "--quiet", "--wheel-dir", str(wheels), str(PROJECT_DIR)])
        site = tree / GUEST_SITE.relative_to("/opt/fleetledger")
        _run([*pip, "install", "--quiet", "--no-index", "--find-links", str(wheels), "--target", str(site),
              "fleetledger"])
        for source in AGENT_SOURCES:
            shutil.copyfile(source, tree / GUEST_AGENT.parent.relative_to("/opt/fleetledger") / source.name)
        _ext4(image, tree, "fl-app")


def _ext4(image: Path, tree: Path, label: str) -> None:
    """Writes ``tree`` into a new ext4 image ``image`` (no journal: it is only ever read)."""
    used = sum(p.lstat().st_size for p in tree.rglob("*"))
    size_kib = (int(used * 1.5) + IMAGE_SLACK_BYTES) // 1024
    staging = image.with_suffix(".tmp")
    staging.unlink(missing_ok=True)
    _run(["mke2fs", "-q", "-F", "-t", "ext4", "-O", "^has_journal,^metadata_csum", "-L", label,
          "-E", "root_owner=0:0", "-d", str(tree), str(staging), f"{size_kib}k"])
    staging.replace(image)


def _replace(path: Path, data: bytes) -> None:
    """Writes ``path`` whole through a temporary file and a rename."""
    staging = path.with_name(path.name + ".tmp")
    staging.write_bytes(data)
    staging.replace(path)


def _run(cmd: list[str]) -> None:
    """Runs a build command; its output goes to this process's.

    Raises:
        BuildError: the command is missing or failed.
    """
    try:
        subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"{cmd[0]} failed: {exc}") from exc
