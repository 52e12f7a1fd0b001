"""The guest's initramfs: busybox-static, the kernel modules the guest needs, and ``/init``.

``/init`` loads the modules, mounts the base image (read-only) under a tmpfs overlay so that
mount points can be made for the host paths the guest agent mounts (the overlay is made
read-only again by the agent before the worker starts), mounts the app image read-only at
``/opt/fleetledger``, and hands over to the guest agent with ``switch_root``.
"""

from __future__ import annotations

import gzip
import io
import stat
from pathlib import Path

from .images import GUEST_AGENT, GUEST_SITE

MODULES = ("virtio_mmio", "virtio_blk", "virtio_console", "9pnet_virtio", "9p", "ext4", "overlay", "qemu_fw_cfg",
           "crc32c_generic")
"""Kernel modules the guest loads (their dependencies are added from ``modules.dep``)."""

INIT = f"""#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /lower /app /upper /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
while read -r module; do /bin/busybox insmod "/modules/$module" || exit 1; done < /modules/order
find_label() {{
  n=0
  until disk=$(/bin/busybox findfs "LABEL=$1" 2>/dev/null) || [ $n -ge 300 ]; do
    /bin/busybox usleep 10000; n=$((n+1))
  done
  echo "$disk"
}}
/bin/busybox mount -t ext4 -o ro,noload "$(find_label fl-base)" /lower || exit 1
/bin/busybox mount -t ext4 -o ro,noload "$(find_label fl-app)" /app || exit 1
/bin/busybox mount -t tmpfs -o mode=0755,size=16m tmpfs /upper
/bin/busybox mkdir -p /upper/data /upper/work
/bin/busybox mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work overlay /newroot
/bin/busybox mkdir -p /newroot/opt/fleetledger
/bin/busybox mount --move /app /newroot/opt/fleetledger
/bin/busybox mount --move /proc /newroot/proc
/bin/busybox mount --move /sys /newroot/sys
/bin/busybox mount --move /dev /newroot/dev
export PYTHONPATH={GUEST_SITE}
exec /bin/busybox switch_root /newroot /usr/bin/python3 -S -I {GUEST_AGENT}
"""


def module_order(modules_dir: Path, wanted: tuple[str, ...] = MODULES) -> list[str]:
    """Returns the module files to load, dependencies first, as paths relative to ``modules_dir``.

    Raises:
        FileNotFoundError: ``modules.dep`` is missing, or a wanted module is not in it
            (neither as a module nor built in).
    """
    deps: dict[str, list[str]] = {}
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        target, _, needs = line.partition(":")
        deps[target] = needs.split()
    builtin_file = modules_dir / "modules.builtin"
    builtin = set(builtin_file.read_text().split()) if builtin_file.is_file() else set()
    by_name = {Path(p).name.split(".ko")[0].replace("-", "_"): p for p in deps}
    order: list[str] = []

    def add(path: str) -> None:
        if path in order:
            return
        for dep in deps[path]:
            add(dep)
        order.append(path)

    for name in wanted:
        if name in by_name:
            add(by_name[name])
        elif not any(Path(b).name.split(".ko")[0].replace("-", "_") == name for b in builtin):
            raise FileNotFoundError(f"kernel module {name} is neither in {modules_dir}/modules.dep nor built in")
    return order


def build(busybox: Path, modules_dir: Path) -> bytes:
    """Returns the gzip-compressed newc cpio archive of the initramfs.

    Args:
        busybox: A statically linked busybox (``/bin/busybox`` of busybox-static).
        modules_dir: ``/lib/modules/<kernel release>`` of the guest's kernel.

    Raises:
        FileNotFoundError: a module or busybox is missing.
    """
    order = module_order(modules_dir)
    archive = _Cpio()
    for folder in ("bin", "dev", "modules", "proc", "sys"):
        archive.add(folder, b"", stat.S_IFDIR | 0o755)
    archive.add("bin/busybox", busybox.read_bytes(), stat.S_IFREG | 0o755)
    archive.add("init", INIT.encode(), stat.S_IFREG | 0o755)
    names = []
    for path in order:
        name = Path(path).name
        archive.add(f"modules/{name}", (modules_dir / path).read_bytes(), stat.S_IFREG | 0o644)
        names.append(name)
    archive.add("modules/order", ("\n".join(names) + "\n").encode(), stat.S_IFREG | 0o644)
    return gzip.compress(archive.finish(), compresslevel=6, mtime=0)


class _Cpio:
    """Writes a newc ("070701") cpio archive, the format the kernel unpacks as an initramfs."""

    def __init__(self) -> None:
        self._out = io.BytesIO()
        self._ino = 0

    def add(self, name: str, data: bytes, mode: int) -> None:
        self._ino += 1
        self._entry(name, data, mode, self._ino)

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", b"", 0, 0)
        return self._out.getvalue()

    def _entry(self, name: str, data: bytes, mode: int, ino: int) -> None:
        encoded = name.encode() + b"\0"
        fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0)
        self._out.write(b"070701" + b"".join(f"{v:08x}".encode() for v in fields) + encoded)
        self._pad()
        self._out.write(data)
        self._pad()

    def _pad(self) -> None:
        self._out.write(b"\0" * (-self._out.tell() % 4))
