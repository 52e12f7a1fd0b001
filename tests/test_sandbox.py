"""The sandboxes: forbidden actions are refused from inside each available backend, allowed ones
work, egress goes only through the forwarder, and a real worker speaks its protocol inside.

Each backend runs one probe process (``PROBE``) that tries every action of ``ACTIONS`` and
reports what happened; each row of the table is then its own test. A backend that is not
installed is skipped with the reason its ``check_available()`` gives. The microVM boots a VM
(seconds under emulation), so its tests run only with ``FLEETLEDGER_TEST_MICROVM=1``, which CI
sets after building the guest (``.ci/install-sandboxes --with-microvm``).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from fleetledger import errors
from fleetledger.jobs.scan.job import ScanJob
from fleetledger.pool import WorkerPool
from fleetledger.sandbox import NoSandbox, Sandbox, SandboxUnavailable, get_sandbox
from fleetledger.sandbox.egress import Destination, EgressForwarder, connect

from e2e import BOOTS_A_VM, MICROVM_ENV

SECRET_ENV = "FLEETLEDGER_TEST_HOST_SECRET"
SECRET_VALUE = "s3cr3t-" + hashlib.sha256(b"fleetledger sandbox test").hexdigest()[:16]
OUTSIDE_TEXT = "outside-the-sandbox " + SECRET_VALUE
PROBE_TIMEOUT_S = 300.0
WORKER_TIMEOUT_S = 120.0

PROBE = r'''
import json, os, socket, sys

cfg = json.loads(sys.argv[1])


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("planted by the probe")
    return path


def environment():
    seen = dict(os.environ)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    seen[f"/proc/{pid}/environ"] = f.read().decode(errors="replace")
            except OSError:
                pass
    return seen


def identity():
    status = read("/proc/self/status")
    caps = {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines() if line.startswith("Cap")}
    return {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "CapEff": caps["CapEff"],
            "CapPrm": caps["CapPrm"], "pid": os.getpid(), "ppid": os.getppid()}


def imports():
    import bandit, fleetledger
    from fleetledger.jobs.scan import detect
    return {"fleetledger": fleetledger.__version__, "bandit": bandit.__version__}


def egress():
    from fleetledger.sandbox.egress import connect
    conn = connect(cfg["allowed"])
    conn.sendall(b"ping\n")
    return conn.recv(100).decode()


def open_devices():
    opened = []
    for name in sorted(os.listdir("/dev")):
        if name.startswith("vport") or name in ("port", "mem", "kmem", "vsock"):
            try:
                os.close(os.open("/dev/" + name, os.O_RDWR))
                opened.append(name)
            except OSError:
                pass
    return opened


def egress_other():
    from fleetledger.sandbox.egress import connect
    connect(cfg["other"]).close()


def setuid_scratch():
    path = write(cfg["suid_file"])
    os.chmod(path, 0o4755)
    best, options = "", ""
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            point = fields[4]
            if (path.startswith(point.rstrip("/") + "/") or point == "/") and len(point) >= len(best):
                best, options = point, fields[5]
    return {"mode": oct(os.stat(path).st_mode), "mount": best, "options": options.split(",")}


actions = {
    "connect_loopback": lambda: socket.create_connection(("127.0.0.1", cfg["port"]), timeout=5).close(),
    "resolve_name": lambda: socket.getaddrinfo("localhost", 80),
    "read_outside": lambda: read(cfg["outside_file"]),
    "read_through_symlink": lambda: read(cfg["link"]),
    "write_repository": lambda: write(cfg["repo_new_file"]),
    "write_outside_scratch": lambda: write(cfg["outside_new_file"]),
    "write_root": lambda: write(cfg["root_new_file"]),
    "signal_host_process": lambda: os.kill(cfg["host_pid"], 0),
    "environment": environment,
    "identity": identity,
    "read_repository": lambda: read(cfg["repo_file"]),
    "write_scratch": lambda: read(write(cfg["scratch_file"])),
    "imports": imports,
    "open_devices": open_devices,
    "egress_allowed": egress,
    "egress_other": egress_other,
    "setuid_scratch": setuid_scratch,
}


results = {}
for name in cfg["actions"]:
    try:
        results[name] = {"ok": True, "value": actions[name]()}
    except BaseException as exc:
        results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(results, default=str))
'''


@dataclass(frozen=True, kw_only=True)
class World:
    """The host side of one probe run: the paths, the listener, what the probe is told."""

    repo: Path
    scratch: Path
    outside: Path
    listener: socket.socket
    config: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Row:
    """One action the probe tries, and the check of its result (raises AssertionError)."""

    name: str
    check: Callable[[dict[str, Any], World], None]


def refused(result: dict[str, Any], world: World) -> None:
    assert not result["ok"], f"the action succeeded inside the sandbox: {result}"


def refused_secret(result: dict[str, Any], world: World) -> None:
    assert not result["ok"] or OUTSIDE_TEXT not in str(result.get("value")), result


def refused_connect(result: dict[str, Any], world: World) -> None:
    refused(result, world)
    world.listener.settimeout(0.2)
    with pytest.raises(TimeoutError):
        world.listener.accept()


def refused_write(path_key: str) -> Callable[[dict[str, Any], World], None]:
    def check(result: dict[str, Any], world: World) -> None:
        refused(result, world)
        assert not Path(world.config[path_key]).exists(), "the write reached the host"
    return check


def no_host_environment(result: dict[str, Any], world: World) -> None:
    assert result["ok"], result
    assert SECRET_VALUE not in json.dumps(result["value"]), "the host's environment reached the sandbox"
    assert SECRET_ENV not in result["value"]


def unprivileged(result: dict[str, Any], world: World) -> None:
    assert result["ok"], result
    value = result["value"]
    assert value["uid"] != 0 and value["euid"] != 0 and value["gid"] != 0, value
    assert int(value["CapEff"], 16) == 0 and int(value["CapPrm"], 16) == 0, value
    assert value["pid"] != 1 and value["ppid"] != 1, "an ordinary process inside, not the namespace's init"


def reads_repository(result: dict[str, Any], world: World) -> None:
    assert result == {"ok": True, "value": (world.repo / "hello.py").read_text()}


def writes_scratch(result: dict[str, Any], world: World) -> None:
    assert result == {"ok": True, "value": "planted by the probe"}


def opens_no_device(result: dict[str, Any], world: World) -> None:
    """The VM's virtio-serial ports (the protocol, the egress channel) and I/O ports are root's:
    a worker uses only the ends it was handed."""
    assert result == {"ok": True, "value": []}, result


def scratch_private_nosuid(result: dict[str, Any], world: World) -> None:
    """Issue 13, attack 3: a taken-over worker cannot leave a setuid binary on the host:
    scratch is a private mount (nothing written there reaches the host folder) that is
    ``nosuid,nodev``."""
    assert not Path(world.config["suid_file"]).exists(), "a file written in scratch reached the host"
    if result["ok"]:
        value = result["value"]
        assert value["mount"] == world.config["suid_file"].rsplit("/", 1)[0], value
        if world.config["backend"] != "gvisor":  # gVisor's tmpfs is the sentry's memory, shown as "rw" only
            assert {"nosuid", "nodev"} <= set(value["options"]), value


def imports_tools(result: dict[str, Any], world: World) -> None:
    assert result["ok"], result
    assert set(result["value"]) == {"fleetledger", "bandit"}


ACTIONS = [
    Row(name="connect_loopback", check=refused_connect),
    Row(name="resolve_name", check=refused),
    Row(name="read_outside", check=refused_secret),
    Row(name="read_through_symlink", check=refused_secret),
    Row(name="write_repository", check=refused_write("repo_new_file")),
    Row(name="write_outside_scratch", check=refused_write("outside_new_file")),
    Row(name="write_root", check=refused_write("root_new_file")),
    Row(name="signal_host_process", check=refused),
    Row(name="environment", check=no_host_environment),
    Row(name="identity", check=unprivileged),
    Row(name="read_repository", check=reads_repository),
    Row(name="write_scratch", check=writes_scratch),
    Row(name="imports", check=imports_tools),
    Row(name="open_devices", check=opens_no_device),
    Row(name="setuid_scratch", check=scratch_private_nosuid),
]

SANDBOXES = ["bubblewrap", "gvisor", pytest.param("microvm", marks=BOOTS_A_VM)]


def available(name: str) -> Sandbox:
    """Returns the backend, or skips the test with the reason ``check_available`` gives; with
    ``FLEETLEDGER_TEST_MICROVM=1`` (as in CI) a microVM that cannot run fails the test."""
    sandbox = get_sandbox(name)
    try:
        sandbox.check_available()
    except SandboxUnavailable as exc:
        if name == "microvm" and os.environ.get(MICROVM_ENV) == "1":
            pytest.fail(f"{MICROVM_ENV}=1 but {exc} (bash .ci/install-sandboxes --with-microvm)")
        pytest.skip(f"{name} is not available here: {exc}")
    return sandbox


def make_world(root: Path) -> World:
    """Plants a repository (with a symlink pointing outside), a secret outside, and a listener."""
    repo, scratch, outside = root / "repo", root / "scratch", root / "outside"
    for folder in (repo, scratch, outside):
        folder.mkdir()
    (repo / "hello.py").write_text("print('hello from the repository')\n")
    (outside / "secret.txt").write_text(OUTSIDE_TEXT)
    (repo / "innocent.txt").symlink_to(outside / "secret.txt")
    listener = socket.create_server(("127.0.0.1", 0))
    config = {"port": listener.getsockname()[1], "outside_file": str(outside / "secret.txt"),
              "link": str(repo / "innocent.txt"), "repo_new_file": str(repo / "planted.txt"),
              "outside_new_file": str(outside / "planted.txt"), "root_new_file": "/planted-by-the-sandbox-probe",
              "host_pid": os.getpid(),
              "repo_file": str(repo / "hello.py"), "scratch_file": str(scratch / "probe.txt"),
              "suid_file": str(scratch / "suid-probe"),
              "actions": [row.name for row in ACTIONS]}
    return World(repo=repo, scratch=scratch, outside=outside, listener=listener, config=config)


def run_probe(sandbox: Sandbox, world: World, **wrap: Any) -> dict[str, Any]:
    """Runs ``PROBE`` through ``sandbox.wrap`` with a secret in this process's environment."""
    launch = sandbox.wrap([sys.executable, "-c", PROBE, json.dumps(world.config)], read_only=[world.repo],
                          scratch=world.scratch, **wrap)
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryFile() as stderr:
        patch.setenv(SECRET_ENV, SECRET_VALUE)
        # stdin stays open while the probe runs, as a worker's does (a VM's host side of the
        # protocol port counts as disconnected once its input ends).
        proc = subprocess.Popen(launch.argv, env=launch.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr)
        timer = threading.Timer(PROBE_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            out = proc.stdout.read().decode()  # type: ignore[union-attr]
        finally:
            timer.cancel()
            proc.stdin.close()  # type: ignore[union-attr]
            proc.stdout.close()  # type: ignore[union-attr]
            returncode = proc.wait()
        stderr.seek(0)
        ended = sandbox.describe_exit(returncode)
        assert ended == "exit status 0", f"probe failed ({ended}): {stderr.read().decode(errors='replace')[-2000:]}"
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=SANDBOXES)
def probed(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], World]]:
    """One probe run per backend: its results and the world it ran in."""
    sandbox = available(request.param)
    world = make_world(tmp_path_factory.mktemp(request.param))
    world.config["backend"] = request.param
    try:
        yield run_probe(sandbox, world), world
    finally:
        world.listener.close()


@pytest.mark.parametrize("row", ACTIONS, ids=[row.name for row in ACTIONS])
def test_action_inside_sandbox(probed: tuple[dict[str, Any], World], row: Row) -> None:
    results, world = probed
    row.check(results[row.name], world)


@pytest.mark.parametrize("name", ["bubblewrap", "gvisor"])
def test_killing_the_launcher_kills_everything_inside(name: str, tmp_path: Path) -> None:
    """The coordinator kills a worker by its pid: the sandbox's whole process tree goes with it."""
    sandbox = available(name)
    launch = sandbox.wrap([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                          read_only=[], scratch=tmp_path)
    proc = subprocess.Popen(launch.argv, env=launch.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"up\n"  # type: ignore[union-attr]
        inside = psutil.Process(proc.pid).children(recursive=True)
        assert inside, "the sandbox started no processes"
        proc.kill()
        proc.wait()
        _, alive = psutil.wait_procs(inside, timeout=10)
        assert not alive, f"left running after the launcher was killed: {alive}"
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()  # type: ignore[union-attr]
        proc.stdout.close()  # type: ignore[union-attr]


@pytest.mark.parametrize("name", SANDBOXES)
def test_a_worker_killed_by_a_signal_inside_is_reported_as_killed(name: str, tmp_path: Path) -> None:
    sandbox = available(name)
    outcomes = []
    for code in ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "raise SystemExit(3)"):
        launch = sandbox.wrap([sys.executable, "-c", code], read_only=[], scratch=tmp_path)
        done = subprocess.run(launch.argv, env=launch.env, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        outcomes.append(sandbox.describe_exit(done.returncode))
    assert outcomes == ["killed by SIGKILL", "exit status 3"]
    assert NoSandbox().describe_exit(-9) == "killed by SIGKILL" and NoSandbox().describe_exit(137) == "exit status 137"


def test_host_preconditions_of_the_table(tmp_path: Path) -> None:
    """The forbidden actions are possible on the host, so refusing them inside means something."""
    world = make_world(tmp_path)
    try:
        socket.create_connection(("127.0.0.1", world.config["port"]), timeout=5).close()
        assert socket.getaddrinfo("localhost", 80)
        assert Path(world.config["link"]).read_text() == OUTSIDE_TEXT
    finally:
        world.listener.close()


def test_no_sandbox_still_gets_a_clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET_VALUE)
    launch = NoSandbox().wrap(["true"], read_only=[tmp_path], scratch=tmp_path)
    assert launch.argv == ["true"]
    assert SECRET_ENV not in launch.env and launch.env["HOME"] == str(tmp_path)


def test_unknown_backend_is_a_usage_error() -> None:
    with pytest.raises(errors.UsageError, match="bubblewrap, gvisor, microvm, none"):
        get_sandbox("chroot")


def test_missing_program_says_how_to_install() -> None:
    from fleetledger.sandbox.bubblewrap import Bubblewrap
    from fleetledger.sandbox.gvisor import GVisor

    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        Bubblewrap(bwrap="bwrap-not-installed").check_available()
    with pytest.raises(SandboxUnavailable, match="apt-get install runsc"):
        GVisor(runsc="runsc-not-installed").check_available()


# -- egress ----------------------------------------------------------------------------------


@pytest.fixture
def echo_server() -> Iterator[int]:
    """A local TCP server that answers each line with ``echo:<line>``; yields its port."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"echo:" + conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def test_destination_parsing() -> None:
    assert Destination.parse("api.example.com:443") == Destination(host="api.example.com", port=443)
    assert str(Destination.parse("[::1]:8080")) == "[::1]:8080"
    for bad in ("example.com", "example.com:0", "example.com:http", ":80"):
        with pytest.raises(ValueError, match="host:port"):
            Destination.parse(bad)


def test_forwarder_reaches_exactly_its_destination(tmp_path: Path, echo_server: int) -> None:
    destination = Destination(host="127.0.0.1", port=echo_server)
    with EgressForwarder(destination, tmp_path / "egress.sock") as forwarder:
        env = {"FLEETLEDGER_EGRESS": json.dumps({str(destination): str(forwarder.socket_path)})}
        with connect(str(destination), environ=env) as conn:
            conn.sendall(b"ping\n")
            assert conn.recv(100) == b"echo:ping\n"
        with pytest.raises(PermissionError, match="not allowed"):
            connect("127.0.0.1:1", environ=env)
    assert not (tmp_path / "egress.sock").exists()


def test_forwarder_closes_clients_when_the_destination_is_down(tmp_path: Path) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with EgressForwarder(Destination(host="127.0.0.1", port=port), tmp_path / "egress.sock") as forwarder:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(forwarder.socket_path))
            conn.settimeout(10)
            assert conn.recv(100) == b""


@pytest.mark.parametrize("name", SANDBOXES)
def test_egress_only_through_the_forwarder(name: str, tmp_path: Path, echo_server: int) -> None:
    sandbox = available(name)
    world = make_world(tmp_path)
    allowed = f"127.0.0.1:{echo_server}"
    world.config.update(actions=["egress_allowed", "egress_other", "connect_loopback"], allowed=allowed,
                        other="127.0.0.1:1", port=echo_server)
    try:
        with EgressForwarder(Destination.parse(allowed), tmp_path / "egress.sock") as forwarder:
            try:
                results = run_probe(sandbox, world, egress=[forwarder.route])
            finally:
                sandbox.close()
    finally:
        world.listener.close()
    assert results["egress_allowed"] == {"ok": True, "value": "echo:ping\n"}
    assert results["egress_other"]["error"].startswith("PermissionError")
    assert not results["connect_loopback"]["ok"], "a direct connection to the allowed port got through"


def test_microvm_carries_egress_over_its_channel_and_nothing_else(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The VM gets no network device; an allowed destination is a virtio-serial port whose
    host side is the channel server, which reaches only the routes' forwarders."""
    import base64

    from fleetledger.sandbox.egress import EgressRoute
    from fleetledger.sandbox.microvm import MicroVM

    monkeypatch.setenv("FLEETLEDGER_MICROVM_ACCEL", "tcg")  # no probe boot: nothing is launched here
    routes = [EgressRoute(destination=Destination.parse(f"api.example:{443 + n}"), socket_path=tmp_path / f"{n}.sock")
              for n in range(2)]
    vm = MicroVM(root=tmp_path)
    argv = vm.wrap(["true"], read_only=[], scratch=tmp_path, egress=routes).argv
    again = vm.wrap(["true"], read_only=[], scratch=tmp_path, egress=routes).argv
    chardevs = [arg for arg in argv if arg.startswith("socket,")]
    assert chardevs == [f"socket,id=egress,path={tmp_path / 'vm-channel-0.sock'}"]
    assert [arg for arg in again if arg.startswith("socket,")] == chardevs, "one channel server for all VMs"
    assert not any(arg.startswith(("user", "tap", "virtio-net")) or "netdev" in arg for arg in argv)
    assert (tmp_path / "vm-channel-0.sock").is_socket()
    def guest_config(argv: list[str]) -> dict[str, Any]:
        return json.loads(base64.b64decode(next(a for a in argv if "opt/fleetledger/config" in a).split("string=")[1]))

    config = guest_config(argv)
    assert config["egress"] == ["/run/fleetledger/egress/0.sock", "/run/fleetledger/egress/1.sock"]
    assert json.loads(config["env"]["FLEETLEDGER_EGRESS"]) == {
        "api.example:443": "/run/fleetledger/egress/0.sock", "api.example:444": "/run/fleetledger/egress/1.sock"}
    closed = vm.wrap(["true"], read_only=[], scratch=tmp_path).argv
    assert not any(arg.startswith("socket,") for arg in closed)
    assert guest_config(closed)["egress"] == [] and "FLEETLEDGER_EGRESS" not in guest_config(closed)["env"]
    vm.close()
    assert not (tmp_path / "vm-channel-0.sock").exists()


# -- a real worker through the seam ----------------------------------------------------------


@pytest.mark.parametrize("name", ["bubblewrap", "gvisor", pytest.param("microvm", marks=BOOTS_A_VM)])
def test_worker_speaks_the_protocol_and_detects_inside(name: str, tmp_path: Path) -> None:
    sandbox = available(name)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("import subprocess\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n")
    (repo / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    job = ScanJob(repo, workspace=tmp_path / "ws", argv=[])
    detect = next(spec for spec in job.plan("detect", None) if spec.inputs["kind"] == "detect")  # type: ignore[arg-type]
    pool = WorkerPool(sandbox=sandbox, job_module=job.worker_module, read_only=[repo], scratch=tmp_path / "scratch",
                      logs=tmp_path, heartbeat_s=0)
    worker = pool.start("w01")
    try:
        hello = collect_until(pool, "ready", WORKER_TIMEOUT_S)[0]
        assert hello["op"] == "hello" and hello["worker"] == "w01"
        assert hello["pid"] != worker.pid, "the worker runs as the launched process, not inside the sandbox"
        pool.send(worker, {"op": "assign", "task": detect.id, "epoch": 1, "sprint": "detect", "inputs": detect.inputs,
                           "calls_allowed": 0, "done": {}, "failures": {}, "denied": [],
                           "context": {"root": str(repo)}})
        messages = collect_until(pool, "finished", WORKER_TIMEOUT_S)
    finally:
        pool.stop_all()
    reports = {m["payload"]["result"]["path"]: m["payload"]["result"] for m in messages
               if m["op"] == "record" and m["kind"] == "step.done"}
    assert set(reports) == {"app.py", "clean.py"}, pool.log_tail("w01")
    assert reports["clean.py"]["candidates"] == []
    assert any("B602" in json.dumps(c) for c in reports["app.py"]["candidates"]), reports["app.py"]


def collect_until(pool: WorkerPool, op: str, timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """Returns the workers' messages up to and including the first ``op``."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        messages, dead = pool.poll(0.5)
        seen += [m for _, m in messages]
        if any(m["op"] == op for m in seen):
            return seen[: next(i for i, m in enumerate(seen) if m["op"] == op) + 1]
        assert not dead, f"the worker died: {[pool.log_tail(w.id) for w in dead]}"
    raise AssertionError(f"no {op!r} within {timeout_s} s; got {seen}")
