"""Sandbox start cost per batch, on each backend available here, next to ``none``.

    python bench/sandbox_bench.py [--runs 20] [--worker-runs 5] [--backends none,bubblewrap,...]

A worker process is one batch (one sandbox per worker process), so the cost that matters is
the start of one sandbox. Prints, per backend, the median of:
  1. ``true``: start a trivial command through ``wrap()`` and wait for it to end;
  2. ``worker``: start a real worker process through the seam and wait for its ``hello``
     (the sandbox, the interpreter and the job module's imports).
and each as a ratio of the ``none`` baseline measured in the same run. With ``--egress``, also
the cost of egress (one destination allowed, reached through its forwarder; in a microVM, over
the virtio-serial channel): the median round trip of a 1 KiB request on a new connection, and
the throughput of an 8 MiB echo, both measured inside the sandbox. A backend that is not
available is listed with the reason its ``check_available()`` gives.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleetledger.pool import WorkerPool  # noqa: E402
from fleetledger.sandbox import BACKENDS, Sandbox, SandboxUnavailable, get_sandbox  # noqa: E402
from fleetledger.sandbox.egress import Destination, EgressForwarder  # noqa: E402

TRUE = "/usr/bin/true"
HELLO_TIMEOUT_S = 300.0
BULK_BYTES = 8 * 1024 * 1024
EGRESS_PROBE = r'''
import json, socket, statistics, sys, threading, time
from fleetledger.sandbox.egress import connect

destination, runs, bulk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def echo(payload):
    with connect(destination) as conn:
        sender = threading.Thread(target=lambda: (conn.sendall(payload), conn.shutdown(socket.SHUT_WR)))
        sender.start()
        got = 0
        while chunk := conn.recv(1 << 16):
            got += len(chunk)
        sender.join()
    assert got == len(payload), (got, len(payload))


echo(b"warm-up")
times = []
for _ in range(runs):
    start = time.perf_counter()
    echo(b"x" * 1024)
    times.append(time.perf_counter() - start)
start = time.perf_counter()
echo(b"y" * bulk)
print(json.dumps({"rtt_s": statistics.median(times), "bulk_s": time.perf_counter() - start}))
'''


def time_true(sandbox: Sandbox, folder: Path, runs: int) -> float:
    """Returns the median seconds to start and finish ``true`` in the sandbox."""
    times = []
    for _ in range(runs):
        launch = sandbox.wrap([TRUE], read_only=[folder / "repo"], scratch=folder / "scratch")
        start = time.perf_counter()
        done = subprocess.run(launch.argv, env=launch.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
        if sandbox.describe_exit(done.returncode) != "exit status 0":
            raise RuntimeError(f"`true` in {sandbox.name}: {sandbox.describe_exit(done.returncode)}")
    return statistics.median(times)


def time_worker(sandbox: Sandbox, folder: Path, runs: int) -> float:
    """Returns the median seconds from spawning a scan worker to its ``hello``."""
    times = []
    for n in range(runs):
        pool = WorkerPool(sandbox=sandbox, job_module="fleetledger.jobs.scan.tasks", read_only=[folder / "repo"],
                          scratch=folder / "scratch", logs=folder, heartbeat_s=0)
        start = time.perf_counter()
        pool.start(f"w{n:02d}")
        try:
            while time.perf_counter() - start < HELLO_TIMEOUT_S:
                messages, dead = pool.poll(0.5)
                if any(m["op"] == "hello" for _, m in messages):
                    times.append(time.perf_counter() - start)
                    break
                if dead:
                    raise RuntimeError(f"the worker died: {pool.log_tail(dead[0].id)}")
            else:
                raise RuntimeError(f"no hello within {HELLO_TIMEOUT_S} s")
        finally:
            pool.stop_all()
    return statistics.median(times)


@contextmanager
def echo_server() -> Iterator[int]:
    """A TCP echo server on 127.0.0.1 (echoes each connection until it half-closes); its port."""
    server = socket.create_server(("127.0.0.1", 0))

    def echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(1 << 16):
                conn.sendall(data)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=echo, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.shutdown(socket.SHUT_RDWR)
        server.close()


def time_egress(sandbox: Sandbox, folder: Path, runs: int) -> dict[str, float]:
    """Returns the median round trip (seconds) of a 1 KiB echo on a new connection, and the
    throughput (MiB/s) of an 8 MiB echo, from inside the sandbox through its egress path."""
    with echo_server() as port:
        destination = Destination(host="127.0.0.1", port=port)
        socket_path = folder / "egress.sock"
        socket_path.unlink(missing_ok=True)
        with EgressForwarder(destination, socket_path) as forwarder:
            launch = sandbox.wrap([sys.executable, "-c", EGRESS_PROBE, str(destination), str(runs), str(BULK_BYTES)],
                                  read_only=[folder / "repo"], scratch=folder / "scratch", egress=[forwarder.route])
            # stdin stays open while the probe runs, as a worker's does (a VM's host side of the
            # protocol port counts as disconnected once its input ends).
            with tempfile.TemporaryFile() as stderr:
                proc = subprocess.Popen(launch.argv, env=launch.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=stderr)
                timer = threading.Timer(HELLO_TIMEOUT_S, proc.kill)
                timer.start()
                try:
                    out = proc.stdout.read()  # type: ignore[union-attr]
                finally:
                    timer.cancel()
                    proc.stdin.close()  # type: ignore[union-attr]
                    returncode = proc.wait()
                    sandbox.close()
                stderr.seek(0)
                err = stderr.read()
    if sandbox.describe_exit(returncode) != "exit status 0":
        raise RuntimeError(f"egress probe in {sandbox.name}: {err.decode(errors='replace')[-2000:]}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    return {"rtt_s": result["rtt_s"], "mib_per_s": BULK_BYTES / (1 << 20) / result["bulk_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="starts of `true` per backend")
    parser.add_argument("--worker-runs", type=int, default=5, help="worker starts per backend")
    parser.add_argument("--backends", default=",".join(["none", *sorted(set(BACKENDS) - {"none"})]),
                        help="comma-separated backends; none is always measured first")
    parser.add_argument("--egress", action="store_true", help="also measure egress through each backend")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    names = ["none", *[n for n in args.backends.split(",") if n and n != "none"]]
    rows: dict[str, dict[str, float | str]] = {}
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as tmp:
        folder = Path(tmp)
        (folder / "repo").mkdir()
        (folder / "repo" / "app.py").write_text("print('hello')\n")
        for name in names:
            sandbox = get_sandbox(name)
            try:
                sandbox.check_available()
            except SandboxUnavailable as exc:
                rows[name] = {"unavailable": str(exc)}
                continue
            rows[name] = {"true_s": time_true(sandbox, folder, args.runs),
                          "worker_s": time_worker(sandbox, folder, args.worker_runs)}
            if args.egress:
                rows[name].update(time_egress(sandbox, folder, args.runs))
    base = rows["none"]
    for row in rows.values():
        if "true_s" in row:
            row["true_ratio"] = float(row["true_s"]) / float(base["true_s"])
            row["worker_ratio"] = float(row["worker_s"]) / float(base["worker_s"])
        if "rtt_s" in row:
            row["rtt_ratio"] = float(row["rtt_s"]) / float(base["rtt_s"])
            row["throughput_ratio"] = float(row["mib_per_s"]) / float(base["mib_per_s"])
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"sandbox start cost (median; `true` x{args.runs}, worker to hello x{args.worker_runs})")
    print(f"{'backend':<12}{'true':>10}{'ratio':>9}{'worker':>10}{'ratio':>9}")
    for name, row in rows.items():
        if "unavailable" in row:
            print(f"{name:<12}unavailable: {row['unavailable']}")
            continue
        print(f"{name:<12}{float(row['true_s']) * 1000:>8.1f}ms{float(row['true_ratio']):>8.1f}x"
              f"{float(row['worker_s']) * 1000:>8.1f}ms{float(row['worker_ratio']):>8.1f}x")
    if args.egress:
        print(f"\negress (median round trip of 1 KiB on a new connection x{args.runs}; an 8 MiB echo)")
        print(f"{'backend':<12}{'rtt':>10}{'ratio':>9}{'MiB/s':>10}{'ratio':>9}")
        for name, row in rows.items():
            if "rtt_s" in row:
                print(f"{name:<12}{float(row['rtt_s']) * 1000:>8.2f}ms{float(row['rtt_ratio']):>8.1f}x"
                      f"{float(row['mib_per_s']):>10.1f}{float(row['throughput_ratio']):>8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
