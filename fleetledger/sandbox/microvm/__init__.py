"""The microVM backend: one QEMU ``microvm`` virtual machine per worker process (per batch).

The guest (Debian's kernel, a busybox initramfs, a debootstrapped root with Python 3, and the
project's wheels; see ``build``) is built once with ``python -m fleetledger.sandbox.microvm
build`` and cached. Each worker process is one VM:

* the scan target is handed in as read-only 9p exports, mounted at the same paths inside;
  scratch is a private tmpfs in the guest; the guest's root is read-only;
* no network device at all; the worker runs as uid 65534 with no capabilities. Egress to the
  destinations the policy allows goes over a second virtio-serial port to a ``ChannelServer``
  in the coordinator and on through those destinations' forwarders (see ``channel``);
* the JSON-lines protocol runs over a virtio-serial port whose host side is QEMU's stdio, so
  the coordinator talks to the VM exactly as to a local process; the guest's serial console
  (kernel messages, the worker's stderr) goes to QEMU's stderr, the worker's log;
* the worker's end (its exit code, or the signal that killed it) comes back as QEMU's exit
  status through the ``isa-debug-exit`` port (``describe_exit`` decodes it);
* QEMU itself runs under its seccomp sandbox (``-sandbox on``, no spawning, no privilege
  changes) and is killed when the coordinator dies (``setpriv --pdeathsig``).

KVM is used when it can boot the guest's stock kernel (probed once per host kernel and QEMU
version, and cached); otherwise QEMU emulates the CPU (TCG), which works everywhere at a few
seconds a boot, and ``describe()`` says so. ``FLEETLEDGER_MICROVM_ACCEL=kvm|tcg`` forces one.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import Launch, Sandbox, SandboxUnavailable, clean_env
from ..egress import EgressRoute, egress_env, inside_paths
from .channel import PORT_NAME as EGRESS_PORT_NAME
from .channel import ChannelServer
from .build import PACKAGES
from .images import GUEST_SITE, GuestFiles, cache_dir

QEMU = "qemu-system-x86_64"
ACCEL_ENV = "FLEETLEDGER_MICROVM_ACCEL"
INSIDE_UID = 65534
MEMORY_MIB = 768
SCRATCH_SIZE_BYTES = 256 * 1024 * 1024
PORT_NAME = "fleetledger"
GUEST_PYTHON = "/usr/bin/python3"
KVM_PROBE_TIMEOUT_S = 30.0
DEBUG_EXIT_PORT = 0xF4
SIGNALLED = 64
"""The guest reports the worker's end as ``code`` (at most 63) or ``SIGNALLED + signal``."""
DEFAULT_TSC_KHZ = 2_000_000
KERNEL_ARGS = ("console=ttyS0 quiet loglevel=3 panic=-1 reboot=t tsc=reliable no_timer_check "
               "cryptomgr.notests rcupdate.rcu_expedited=1 i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd "
               "random.trust_cpu=on")
BUILD_HINT = "build the guest with `python -m fleetledger.sandbox.microvm build` (as root; a few minutes, once)"


class MicroVM(Sandbox):
    """Runs each worker process in its own QEMU microvm.

    Args:
        qemu: The QEMU system emulator for x86-64.
        root: Folder of the cached guest (``images.cache_dir()`` by default).
    """

    name = "microvm"

    def __init__(self, qemu: str = QEMU, root: Path | None = None) -> None:
        self.qemu = qemu
        self.files = GuestFiles(root=root or cache_dir())
        self._accel: str | None = None
        self._accel_why = ""
        self._channels: dict[tuple[EgressRoute, ...], ChannelServer] = {}

    def check_available(self) -> None:
        """Checks QEMU, the built guest, and which accelerator boots it.

        Raises:
            SandboxUnavailable: QEMU or setpriv is not installed, or the guest is not built or
                is stale (the message gives the install or build command), or the guest
                does not boot (the console's last lines are quoted).
        """
        for program, package in ((self.qemu, "qemu-system-x86"), ("setpriv", "util-linux")):
            if shutil.which(program) is None:
                raise SandboxUnavailable(f"the microvm sandbox needs `{program}`: apt-get install {package} "
                                         f"(the guest also needs {PACKAGES}); or choose another backend with --sandbox")
        missing = self.files.missing()
        if missing:
            raise SandboxUnavailable(f"the microvm guest is not ready ({'; '.join(missing)}): apt-get install "
                                     f"{PACKAGES}, then {BUILD_HINT}")
        self.accel()

    def accel(self) -> str:
        """Returns the accelerator to use, ``"kvm"`` or ``"tcg"``, probing KVM once per host.

        Raises:
            SandboxUnavailable: the guest boots with neither (the console's last lines are quoted).
        """
        if self._accel is not None:
            return self._accel
        forced = os.environ.get(ACCEL_ENV, "")
        if forced in ("kvm", "tcg"):
            self._accel, self._accel_why = forced, f"forced by {ACCEL_ENV}"
            return forced
        key = f"{os.uname().release} {_version(self.qemu)} {self.files.read_manifest().get('kernel')}"
        cache = self.files.root / "accel.json"
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            known = {}
        if known.get("key") != key:
            known = {"key": key, **self._probe()}
            cache.write_text(json.dumps(known), encoding="utf-8")
        self._accel = str(known["accel"])
        self._accel_why = str(known.get("why", ""))
        return self._accel

    def _probe(self) -> dict[str, str]:
        """Boots the guest with KVM, then with TCG; returns the first that works, and why.

        Raises:
            SandboxUnavailable: neither boots it (the console's last lines are quoted).
        """
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            kvm_failure = "no usable /dev/kvm"
        else:
            booted, console = self._boots("kvm")
            if booted:
                return {"accel": "kvm", "why": "KVM boots the guest's stock kernel"}
            kvm_failure = f"KVM cannot boot the guest's stock kernel here ({console})"
        booted, console = self._boots("tcg")
        if not booted:
            raise SandboxUnavailable(f"the microvm guest does not boot here, with KVM ({kvm_failure}) nor "
                                     f"emulated: {console}")
        return {"accel": "tcg", "why": f"software emulation (TCG), seconds a boot: {kvm_failure}"}

    def wrap(self, argv: list[str], *, read_only: list[Path], scratch: Path,
             egress: Sequence[EgressRoute] = ()) -> Launch:
        return self._launch(argv, read_only, scratch, self.accel(), egress)

    def close(self) -> None:
        """Stops the egress channel servers (after the VMs, before their forwarders)."""
        for server in self._channels.values():
            server.stop()
        self._channels.clear()

    def _channel(self, egress: Sequence[EgressRoute]) -> ChannelServer:
        """Returns the channel server for ``egress``, started on first use beside its sockets."""
        key = tuple(egress)
        if key not in self._channels:
            path = egress[0].socket_path.parent / f"vm-channel-{len(self._channels)}.sock"
            path.unlink(missing_ok=True)
            server = ChannelServer([str(route.socket_path) for route in egress], str(path))
            server.start()
            self._channels[key] = server
        return self._channels[key]

    def describe(self) -> dict[str, Any]:
        manifest = self.files.read_manifest()
        accel = self.accel()
        return {"name": self.name, "version": _version(self.qemu), "machine": "microvm", "accel": accel,
                "emulated": accel == "tcg", "accel_why": self._accel_why, "kernel": manifest.get("kernel"),
                "guest": manifest.get("suite"),
                "uid": INSIDE_UID, "scratch": "private tmpfs",
                "network": "none (no network device; egress only through host forwarders, over virtio-serial)"}

    def describe_exit(self, returncode: int | None) -> str:
        """Decodes QEMU's status ``2 * value + 1`` into the guest worker's end (see ``guest_init``)."""
        if returncode is None or returncode < 0 or returncode % 2 == 0:
            reason = super().describe_exit(returncode)
            return reason if returncode != 0 else "the VM powered off without reporting the worker's end"
        value = returncode >> 1
        return super().describe_exit(-(value - SIGNALLED) if value >= SIGNALLED else value)

    def _launch(self, argv: list[str], read_only: Sequence[Path], scratch: Path, accel: str,
                egress: Sequence[EgressRoute] = ()) -> Launch:
        """Returns the QEMU command line booting a VM that runs ``argv`` (host paths) inside,
        with an egress channel when ``egress`` names allowed destinations."""
        guest_argv = list(argv)
        if guest_argv and os.path.realpath(guest_argv[0]) in (os.path.realpath(sys.executable), sys.executable):
            guest_argv[0] = GUEST_PYTHON
        shares = [{"tag": f"ro{n}", "path": os.path.abspath(p)} for n, p in enumerate(read_only)]
        where = inside_paths(egress)
        env = clean_env(scratch) | {"PYTHONPATH": str(GUEST_SITE)} | egress_env(egress, where)
        config = {"argv": guest_argv, "env": env, "shares": shares, "scratch": os.path.abspath(scratch),
                  "scratch_size_bytes": SCRATCH_SIZE_BYTES, "uid": INSIDE_UID, "port": PORT_NAME,
                  "egress": [str(where[route.socket_path]) for route in egress], "egress_port": EGRESS_PORT_NAME}
        encoded = base64.b64encode(json.dumps(config).encode()).decode()
        cmd = ["setpriv", "--pdeathsig", "KILL", "--", self.qemu,
               "-M", "microvm,x-option-roms=off,rtc=on,pit=off,pic=off",
               "-accel", accel, "-cpu", "host" if accel == "kvm" else "max",
               "-m", str(MEMORY_MIB), "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none",
               "-no-reboot", "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
               "-kernel", str(self.files.kernel), "-initrd", str(self.files.initramfs),
               "-append", KERNEL_ARGS if accel == "kvm" else f"{KERNEL_ARGS} tsc_early_khz={_tsc_khz()}",
               "-chardev", "file,id=console,path=/proc/self/fd/2,append=on", "-serial", "chardev:console",
               "-fw_cfg", f"name=opt/fleetledger/config,string={encoded}"]
        for image in (self.files.base, self.files.app):
            cmd += ["-drive", f"id={image.stem},file={image},format=raw,if=none,readonly=on",
                    "-device", f"virtio-blk-device,drive={image.stem}"]
        for share in shares:
            path = share["path"].replace(",", ",,")
            cmd += ["-fsdev", f"local,id={share['tag']},path={path},security_model=none,readonly=on",
                    "-device", f"virtio-9p-device,fsdev={share['tag']},mount_tag={share['tag']}"]
        cmd += ["-device", f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=0x04",
                "-chardev", "stdio,id=protocol,signal=off", "-device", "virtio-serial-device",
                "-device", f"virtserialport,chardev=protocol,name={PORT_NAME}"]
        if egress:
            channel = self._channel(egress).socket_path.replace(",", ",,")
            cmd += ["-chardev", f"socket,id=egress,path={channel}",
                    "-device", f"virtserialport,chardev=egress,name={EGRESS_PORT_NAME}"]
        return Launch(argv=cmd, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"})

    def _boots(self, accel: str) -> tuple[bool, str]:
        """Boots the guest running ``true`` with ``accel``; returns (it worked, last console lines)."""
        launch = self._launch(["/usr/bin/true"], [], Path("/run/fleetledger-probe"), accel)
        try:
            done = subprocess.run(launch.argv, env=launch.env, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=KVM_PROBE_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            return False, f"no power-off within {KVM_PROBE_TIMEOUT_S} s with {accel}: {_tail(exc.stderr)}"
        console = _tail(done.stderr)
        return self.describe_exit(done.returncode) == "exit status 0", console


def _tsc_khz() -> int:
    """Returns the host's TSC rate in kHz, which an emulated guest reads (it has no timer to
    calibrate against; without it the guest's boot stalls), from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("cpu MHz"):
                    return int(float(line.split(":")[1]) * 1000)
    except (OSError, ValueError):
        pass
    return DEFAULT_TSC_KHZ


def _tail(data: bytes | None, lines: int = 8) -> str:
    """Returns the last ``lines`` lines of console output, joined by " | "."""
    text = (data or b"").decode(errors="replace").strip().splitlines()
    return " | ".join(text[-lines:])


def _version(qemu: str) -> str:
    """Returns the first line of ``qemu --version``, or "unknown"."""
    try:
        done = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (done.stdout.strip().splitlines() or ["unknown"])[0]
