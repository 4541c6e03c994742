"""The resident encoder (recall/encoder.py) and its client (recall/encoder_client.py): one private server per
agent dir, started on demand and gone when idle, off or outdated; a client that answers None within its
deadline whatever is, or is not, at the other end of the socket."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memory_helpers import REPO, eventually, make_env, run_cli

from harnesslink_core.paths import locations
from harnesslink_core.recall import encoder_client as client

SLACK = 0.05  # what the client may take past its deadline


@pytest.fixture
def world(tmp_path):
    env = make_env(tmp_path)
    return env, locations(env)


def start_server(env, *extra: str, python_path: str | None = None) -> subprocess.Popen:
    """`harnesslink encoder serve` in its own process, once it answers."""
    run_env = {**env, "PYTHONPATH": python_path or env["PYTHONPATH"]}
    server = subprocess.Popen([sys.executable, "-m", "harnesslink_core.main", "encoder", "serve", *extra],
                              env=run_env, cwd=env["HOME"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    locs = locations(env)
    assert eventually(lambda: client.status(locs) or server.poll() is not None, 30), "the encoder never came up"
    assert server.poll() is None, server.stderr.read()
    return server


@pytest.fixture
def server(world):
    env, locs = world
    process = start_server(env, "--idle-seconds", "120")
    yield process
    end(process)


def end(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(10)


def servers_of(locs) -> list[int]:
    """The pids of encoder processes serving this agent dir."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if b"serve" in cmdline and b"encoder" in cmdline and f"HARNESSLINK_HOME={locs.agent_path}\0".encode() in environ:
            found.append(int(pid))
    return found


def stop_all(locs) -> None:
    client.stop(locs)
    for pid in servers_of(locs):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    eventually(lambda: not servers_of(locs), 10)


def cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


def test_vectors_come_back_normalised_and_mean_what_the_texts_mean(world, server):
    _, locs = world
    texts = ["fixed the login bug: the session cookie expired at midnight",
             "why did signing in stop working after 12am? something with the session cookie",
             "bake a sourdough loaf with a long cold proof", ""]
    vectors = client.encode(locs, texts, 5000)
    assert vectors is not None and len(vectors) == 4 and all(len(v) == client.DIMS for v in vectors)
    assert all(abs(cosine(v, v) - 1) < 1e-4 for v in vectors)
    assert cosine(vectors[0], vectors[1]) > 0.5 > cosine(vectors[0], vectors[2]) + 0.3
    from harnesslink_core.recall.encoder import Model

    direct = memoryview(Model().encode(texts[:1])).cast("f").tolist()
    assert cosine(direct, vectors[0]) > 0.99999
    assert client.encode(locs, [], 2000) == []


def test_a_texts_vector_is_the_same_whatever_it_is_asked_with():
    from harnesslink_core.recall.encoder import Model

    model = Model()
    short = "the session cookie expired at midnight"
    long = " ".join(["the connection pool ran out when the nightly export and the web traffic met"] * 40)
    alone = model.encode([short])
    beside = model.encode([long, short, "bake a loaf"])
    assert beside[384 * 4:384 * 8] == alone  # to the bit: no padding, no batch-mates in its sums
    assert len(beside) == 3 * 384 * 4


class _Overlapping:
    """A session that holds its first two runs until both have started (two texts in flight, or a timeout),
    then runs them, and fails any run of `failing_length` tokens."""

    def __init__(self, session, failing_length: int = 0) -> None:
        self.session = session
        self.failing_length = failing_length
        self.started = threading.Barrier(2, timeout=10)
        self.calls = 0
        self.lock = threading.Lock()

    def run(self, names, feeds):
        with self.lock:
            self.calls += 1
            first_two = self.calls <= 2
        if first_two:
            self.started.wait()
        if feeds["input_ids"].shape[1] == self.failing_length:
            raise RuntimeError("a failing run")
        return self.session.run(names, feeds)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one text at a time on one core")
def test_two_texts_are_encoded_at_once_each_to_the_bit_of_a_one_thread_run():
    import onnxruntime

    from harnesslink_core.recall.encoder import DATA, Model

    model = Model()
    texts = ["the session cookie expired at midnight", "bake a loaf",
             " ".join(["the connection pool ran out when the nightly export and the web traffic met"] * 40),
             "why did signing in stop working right after 12am?", "a migration that locked the table for an hour"]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # a run computed by one thread: what a run beside another may get
    one_thread = onnxruntime.InferenceSession(str(DATA / "model.onnx"), options, providers=["CPUExecutionProvider"])
    alone = b"".join(model.encode([text]) for text in texts)
    real = model._session
    model._session = _Overlapping(one_thread)
    assert model.encode(texts) == alone  # the barrier broke (BrokenBarrierError) if only one ran at a time
    failing = len(model._tokenizer.encode(texts[2]).ids)
    model._session = _Overlapping(real, failing)
    with pytest.raises(RuntimeError, match="a failing run"):
        model.encode(texts)  # whichever thread ran it, the encode fails: no row is left zero


def test_the_socket_is_private_and_no_port_is_open(world, server):
    _, locs = world
    folder = Path(locs.encoder_path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    sock = folder / client.SOCKET_NAME
    assert stat.S_ISSOCK(sock.lstat().st_mode) and stat.S_IMODE(sock.lstat().st_mode) == 0o600
    inodes = set()
    for fd in os.listdir(f"/proc/{server.pid}/fd"):
        target = os.readlink(f"/proc/{server.pid}/fd/{fd}")
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    assert inodes
    for table in ("tcp", "tcp6", "udp", "udp6"):
        lines = Path(f"/proc/{server.pid}/net/{table}").read_text().splitlines()[1:]
        assert not inodes & {line.split()[9] for line in lines}, table


def test_ten_hooks_starting_it_at_once_leave_one_server(world):
    env, locs = world
    code = ("import sys\nfrom harnesslink_core.paths import locations\nfrom harnesslink_core.recall import encoder_client\n"
            "encoder_client.ensure_started(locations())\n")
    try:
        starters = [subprocess.Popen([sys.executable, "-c", code], env=env) for _ in range(10)]
        assert all(p.wait(30) == 0 for p in starters)
        assert eventually(lambda: client.status(locs), 30)
        assert eventually(lambda: len(servers_of(locs)) == 1, 10), servers_of(locs)
        time.sleep(0.5)
        assert len(servers_of(locs)) == 1
        assert client.encode(locs, ["one server answers"], 2000) is not None
        assert not client.ensure_started(locs)  # it runs: nothing is spawned
    finally:
        stop_all(locs)


def test_a_dead_servers_socket_is_replaced(world):
    env, locs = world
    first = start_server(env, "--idle-seconds", "120")
    try:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        assert os.path.lexists(os.path.join(locs.encoder_path, client.SOCKET_NAME))  # left behind
        assert client.encode(locs, ["anyone there?"], 200) is None
        assert client.ensure_started(locs)
        assert eventually(lambda: client.encode(locs, ["anyone there?"], 1000), 30)
    finally:
        end(first)
        stop_all(locs)


def test_a_server_of_another_version_is_never_used_and_exits_once_upgraded(world, tmp_path, monkeypatch):
    env, locs = world
    code = tmp_path / "code"
    shutil.copytree(REPO / "harnesslink_core", code / "harnesslink_core",
                    ignore=shutil.ignore_patterns("__pycache__", "model.onnx"))
    os.symlink(REPO / "harnesslink_core" / "data" / "encoder" / "model.onnx",
               code / "harnesslink_core" / "data" / "encoder" / "model.onnx")
    old = start_server(env, "--idle-seconds", "120", python_path=str(code))
    try:
        assert client.encode(locs, ["same version"], 2000) is not None
        monkeypatch.setattr(client, "_stamp", "9.9.9/1/another")
        assert client.encode(locs, ["a newer client"], 2000) is None
        time.sleep(0.3)
        assert old.poll() is None  # its package is unchanged on disk: a stray client does not stop it
        init = code / "harnesslink_core" / "__init__.py"
        init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "9.9.9"'))
        assert client.encode(locs, ["a newer client"], 2000) is None
        old.wait(10)  # upgraded under it, and told so by a newer client: it exits
    finally:
        end(old)


def test_hostile_clients_neither_crash_it_nor_grow_it(world, server):
    _, locs = world
    address, folder_fd = client.socket_address(locs.encoder_path)
    before = client.status(locs)["rss_bytes"]

    def connection(payload: bytes = b"") -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(address)
        if payload:
            sock.sendall(payload)
        return sock

    def frame(data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + data

    hostile = [connection(b"\xff\xff\xff\xffgarbage"), connection(os.urandom(4096)), connection(b"\x00\x00"),
               connection(frame(b"[" * 200_000 + b"]" * 200_000)), connection(frame(b"\xc3(not utf-8")),
               connection(frame(b'{"op": "encode", "stamp": 1, "texts": [1, 2]}')),
               connection(frame(b'{"op": "encode", "texts": "' + b"x" * 900_000 + b'"}')),
               connection(frame(b"{}") + b"trailing")]
    hostile += [connection() for _ in range(100)]  # more than it keeps open
    try:
        # a hook's client gives up at once on a full backlog; the server, accepting the flood a round at a
        # time, serves a request again within seconds on a loaded machine
        deadline = time.monotonic() + 10
        while (answer := client.encode(locs, ["still serving"], 3000)) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert answer is not None
        assert server.poll() is None
        after = client.status(locs)["rss_bytes"]
        assert after - before < 64 << 20, (before, after)
    finally:
        for sock in hostile:
            sock.close()
        if folder_fd is not None:
            os.close(folder_fd)
    assert client.encode(locs, ["after them"], 3000) is not None


def test_a_slow_client_is_dropped_and_does_not_hold_up_others(world, server):
    _, locs = world
    address, folder_fd = client.socket_address(locs.encoder_path)
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(address)
    slow.sendall(b"\x00\x00\x01\x00{")  # a request that never finishes
    try:
        started = time.monotonic()
        assert client.encode(locs, ["not held up"], 2000) is not None
        assert time.monotonic() - started < 1
    finally:
        slow.close()
        if folder_fd is not None:
            os.close(folder_fd)


def plant(kind: str, path: str):
    """Something other than a serving encoder at the socket's path; what to close afterwards."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if kind == "garbage file":
        Path(path).write_bytes(os.urandom(1 << 16))
        return []
    if kind == "fifo":
        os.mkfifo(path)
        return []
    address, folder_fd = client.socket_address(os.path.dirname(path))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(address)
    held = [sock] + ([] if folder_fd is None else [folder_fd])
    if kind == "socket nobody accepts on":
        sock.listen(64)
    elif kind == "full backlog":
        sock.listen(0)
        sock.setblocking(False)
        for _ in range(8):
            filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            filler.setblocking(False)
            try:
                filler.connect(address)
            except BlockingIOError:
                filler.close()
                break
            held.append(filler)
    return held  # "bound, not listening": refused


@pytest.mark.parametrize("kind", ["nothing", "garbage file", "fifo", "socket nobody accepts on", "full backlog",
                                  "bound, not listening"])
def test_the_client_returns_none_within_its_deadline(world, kind):
    _, locs = world
    held = [] if kind == "nothing" else plant(kind, os.path.join(locs.encoder_path, client.SOCKET_NAME))
    try:
        for deadline_ms in (30, 150):
            started = time.monotonic()
            assert client.encode(locs, ["is anyone there"], deadline_ms) is None
            assert time.monotonic() - started < deadline_ms / 1000 + SLACK, kind
        assert client.status(locs, 50) is None and client.stop(locs, 50) is False
    finally:
        for thing in held:
            os.close(thing) if isinstance(thing, int) else thing.close()


def test_an_encoder_killed_mid_request_is_a_none_at_once(world, server):
    _, locs = world
    texts = [f"text number {i} " + "with quite a few words in it " * 40 for i in range(256)]
    killer = threading.Timer(0.1, server.kill)
    killer.start()
    started = time.monotonic()
    assert client.encode(locs, texts, 10_000) is None
    assert time.monotonic() - started < 3
    killer.join()


def test_it_exits_when_idle_and_uses_no_cpu_while_it_waits(world):
    env, locs = world
    process = start_server(env, "--idle-seconds", "2.5")
    try:
        def cpu_ticks() -> int:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])

        time.sleep(0.3)
        before = cpu_ticks()
        time.sleep(1.5)
        assert cpu_ticks() - before <= 1  # blocked in the selector: at most a tick (10 ms) in 1.5 s
        assert process.wait(10) == 0
        assert not os.path.lexists(os.path.join(locs.encoder_path, client.SOCKET_NAME))
        assert "exiting: idle" in process.stderr.read().decode()
    finally:
        end(process)


def test_config_turns_it_off_and_back_on(world):
    env, locs = world
    config = Path(locs.agent_path) / "config.yml"
    config.parent.mkdir(parents=True)
    config.write_text("recall:\n  encoder: false\n")
    try:
        assert client.ensure_started(locs)  # a server starts, reads the config and leaves a note
        assert eventually(lambda: os.path.exists(os.path.join(locs.encoder_path, client.HELD_NAME)), 30)
        assert eventually(lambda: not servers_of(locs), 10)
        assert not client.ensure_started(locs)  # the note holds while config.yml is unchanged
        assert "encoder: off" in run_cli(env, "status").stdout
        config.write_text("recall:\n  encoder: true\n  encoder_idle_minutes: 1\n")
        assert client.ensure_started(locs)
        assert eventually(lambda: client.encode(locs, ["on again"], 1000), 30)
    finally:
        stop_all(locs)


def test_status_shows_it_and_encoder_stop_stops_it(world, server):
    env, locs = world
    shown = run_cli(env, "status")
    assert shown.returncode == 0, shown.stderr
    line = next(line for line in shown.stdout.splitlines() if line.startswith("encoder:"))
    assert "up (all-MiniLM-L6-v2 int8" in line and client.stamp() in line and "RSS" in line
    stopped = run_cli(env, "encoder", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert server.wait(10) == 0
    assert "encoder: not running" in run_cli(env, "status").stdout


def test_nothing_of_a_request_is_logged(world, server):
    _, locs = world
    secret = "the passphrase is correct-horse-battery-staple"
    assert client.encode(locs, [secret], 3000) is not None
    client.stop(locs)
    server.wait(10)
    log = server.stderr.read().decode()  # its log
    assert "serving" in log and "horse" not in log


def test_the_client_imports_only_what_a_hook_may(world):
    """The client on a hook's path: no socket module (enum, selectors), no numpy, no onnxruntime."""
    env, _ = world
    code = ("import sys\nbefore = set(sys.modules)\nfrom harnesslink_core.paths import locations\n"
            "from harnesslink_core.recall import encoder_client as c\n"
            "assert c.encode(locations(), ['x'], 50) is None\nc.status(locations(), 50)\n"
            "print(' '.join(sorted(set(sys.modules) - before)))\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, check=True)
    added = set(out.stdout.split())
    allowed = {"harnesslink_core", "harnesslink_core.paths", "harnesslink_core.recall", "harnesslink_core.wirejson",
               "harnesslink_core.safefile", "harnesslink_core.recall.encoder_client", "_socket", "_json",
               "__future__", "stat", "_stat", "os", "posixpath", "genericpath", "os.path", "_collections_abc"}
    assert added <= allowed, sorted(added - allowed)
