"""The microVM guest's pid 1: mounts what the host hands in, runs the worker unprivileged, powers off.

Runs inside the guest only (``python3 -S -I``, standard library only), copied into app.img by
the build. Its configuration comes from the host through QEMU's fw_cfg
(``opt/fleetledger/config``: base64 JSON with ``argv``, ``env``, ``shares``, ``scratch``,
``scratch_size_bytes``, ``uid``, ``port``, ``egress``, ``egress_port``):

1. each share (a read-only 9p export of a host folder) is mounted read-only at its host path,
   scratch is a private tmpfs at its host path, and the root is made read-only again;
2. the worker runs as ``uid`` with no capabilities (bounding set emptied, ``no_new_privs``), its
   stdin and stdout the virtio-serial port ``port`` (the host side is QEMU's stdio, i.e. the
   coordinator's pipes), its stderr the serial console (the host's worker log);
3. when the policy allows egress, pid 1 listens on the sockets named in ``egress`` and carries
   their connections over the virtio-serial port ``egress_port`` to the host (``channel``, a
   file beside this one); the worker cannot open the port itself (root's device);
4. when it ends, its status goes to QEMU's ``isa-debug-exit`` port, which ends QEMU with status
   ``2 * value + 1`` (``value``: the exit code, at most 63, or 64 + the signal that killed it);
   the guest powers off if that port is missing.

The worker is a grandchild of pid 1, so that its "orphaned" check (``getppid() == 1``) keeps
its meaning: its parent is a small waiter process that exits with the worker's status.
"""

import base64
import ctypes
import json
import os
import signal
import socket
import sys

CONFIG = "/sys/firmware/qemu_fw_cfg/by_name/opt/fleetledger/config/raw"
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
RB_POWER_OFF = 0x4321FEDC
DEBUG_EXIT_PORT = 0xF4
SIGNALLED = 64
LAST_CAP = 63
NINEP_OPTIONS = "trans=virtio,version=9p2000.L,msize=262144,cache=loose"

libc = ctypes.CDLL(None, use_errno=True)


def mount(source, target, fstype, flags, data=""):
    """mount(2); raises OSError naming the target when it fails."""
    if libc.mount(source.encode(), target.encode(), fstype.encode(), flags, data.encode()) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {fstype} on {target}: {os.strerror(errno)}")


def prctl(option, value):
    """prctl(2) with one argument; returns its result (0 or -1)."""
    return libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def set_up(config):
    """Mounts /tmp, /run, the read-only shares and scratch, then makes the root read-only."""
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for share in config["shares"]:
        os.makedirs(share["path"], exist_ok=True)
        mount(share["tag"], share["path"], "9p", MS_RDONLY | MS_NOSUID | MS_NODEV, NINEP_OPTIONS)
    os.makedirs(config["scratch"], exist_ok=True)
    mount("tmpfs", config["scratch"], "tmpfs", MS_NOSUID | MS_NODEV,
          f"mode=1777,size={config['scratch_size_bytes']}")
    mount("overlay", "/", "overlay", MS_REMOUNT | MS_RDONLY)
    socket.sethostname("sandbox")


def find_port(name):
    """Returns the /dev path of the virtio-serial port called ``name``."""
    for entry in os.listdir("/sys/class/virtio-ports"):
        with open(f"/sys/class/virtio-ports/{entry}/name", encoding="ascii") as f:
            if f.read().strip() == name:
                return f"/dev/{entry}"
    raise FileNotFoundError(f"no virtio-serial port named {name}")


def become_worker(config, port_fd):
    """Drops every privilege, wires stdin/stdout to the port, and execs the worker (never returns)."""
    for cap in range(LAST_CAP + 1):
        prctl(PR_CAPBSET_DROP, cap)
    if prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    os.setgroups([])
    os.setgid(config["uid"])
    os.setuid(config["uid"])
    os.chdir(config["scratch"])
    os.dup2(port_fd, 0)
    os.dup2(port_fd, 1)
    os.close(port_fd)
    os.execve(config["argv"][0], config["argv"], config["env"])


def egress_end(config):
    """Returns the egress channel's guest end, its sockets open but no thread started (threads
    only after the fork), or None when the policy allows no destination."""
    if not config.get("egress"):
        return None
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import channel

    return channel.GuestEnd(os.open(find_port(config["egress_port"]), os.O_RDWR), config["egress"])


def run(config):
    """Runs the worker as a grandchild and returns its status (negative: killed by that signal)."""
    port_fd = os.open(find_port(config["port"]), os.O_RDWR)
    egress = egress_end(config)
    waiter = os.fork()
    if waiter == 0:
        worker = os.fork()
        if worker == 0:
            try:
                become_worker(config, port_fd)
            finally:
                os._exit(127)
        os.close(port_fd)
        status = os.waitpid(worker, 0)[1]
        if os.WIFSIGNALED(status):  # die the same way, so that pid 1 learns the signal
            if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status))
    os.close(port_fd)
    if egress is not None:
        egress.start()
    return os.waitstatus_to_exitcode(os.waitpid(waiter, 0)[1])


def report(status):
    """Ends QEMU with the worker's status through the isa-debug-exit port."""
    value = SIGNALLED + min(-status, SIGNALLED - 1) if status < 0 else min(status, SIGNALLED - 1)
    fd = os.open("/dev/port", os.O_WRONLY)
    try:
        os.lseek(fd, DEBUG_EXIT_PORT, os.SEEK_SET)
        os.write(fd, bytes([value]))
    finally:
        os.close(fd)


def main():
    """Sets up, runs the worker, reports, and powers off, whatever fails on the way."""
    status = 1
    try:
        with open(CONFIG, "rb") as f:
            config = json.loads(base64.b64decode(f.read()))
        set_up(config)
        status = run(config)
    except BaseException as exc:  # pid 1 must not die: report, then power off
        print(f"fleetledger guest: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    os.sync()
    try:
        report(status)
    except OSError as exc:
        print(f"fleetledger guest: cannot report status {status}: {exc}", file=sys.stderr, flush=True)
    libc.reboot(RB_POWER_OFF)


if __name__ == "__main__":
    main()
