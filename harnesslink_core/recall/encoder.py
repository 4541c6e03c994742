"""The resident encoder: all-MiniLM-L6-v2 (data/encoder, scripts/build_encoder.py) kept warm in a process
of its own beside the hooks, which ask it through recall/encoder_client.py and never wait for it.

    python -m harnesslink_core.recall.encoder serve [--idle-seconds N]     (or `harnesslink encoder serve`)

The ssh-agent pattern: started on demand (`encoder_client.ensure_started`), detached, it exits after a
quiet spell (config.yml `recall.encoder_idle_minutes`, 15 by default), when config.yml turns it off
(`recall.encoder: false`), when the package on disk is no longer the one it was started from, or when
its socket is taken away. One per agent dir: the first to hold `encoder/lock` serves, any other exits;
a socket file found there under the lock is a dead server's and is replaced. The socket is 0600 in a
0700 folder, and never a TCP port.

One thread and one selector: it blocks in the selector (waking at most every CHECK_SECONDS with
nothing to do) and serves one request at a time. A client is held to MAX_REQUEST bytes, MAX_TEXTS
texts and CLIENT_SECONDS to send its request and take its answer, and at most MAX_CONNECTIONS are
open at once (a new one closes the oldest), so no client can grow the process or keep it from the
others for long. Nothing of a
request's text is logged: the log (logs/encoder.log, its stdout and stderr) has the start, the exit
and the class of an error.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import socket
import sys
import time
from pathlib import Path

from .. import config
from ..paths import Locations, locations
from ..safefile import read_regular_text
from . import encoder_client as client
from .nearby import MOST, Nearby

DATA = Path(__file__).resolve().parent.parent / "data" / "encoder"
CHECK_SECONDS = 60.0
MAX_REQUEST = 1 << 20
MAX_TEXTS = 256
MAX_TEXT_CHARS = 8000  # far more than the model's 256 tokens: what is cut off would be truncated anyway
MAX_CONNECTIONS = 32
CLIENT_SECONDS = 2.0  # a hook's client sends at once and waits for milliseconds
MAX_LOG_BYTES = 1 << 20
IN_FLIGHT = min(2, os.cpu_count() or 1)  # texts encoded at once (`Model.encode`)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # read by numpy's BLAS when it loads


class Model:
    """The ONNX graph and its tokenizer: texts in, float32 vectors (DIMS, L2-normalised) out."""

    def __init__(self, folder: Path = DATA) -> None:
        import numpy
        import onnxruntime
        from tokenizers import Tokenizer

        self._np = numpy
        self.manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy wait after a run
        self._session = onnxruntime.InferenceSession(str(folder / "model.onnx"), options,
                                                     providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()  # each text runs alone (`encode`)

    @property
    def name(self) -> str:
        return f"{self.manifest.get('model', '?')} int8"

    def encode(self, texts: list[str]) -> bytes:
        """Each text run alone, unpadded: its vector is the same whatever it is asked with, and on two cores
        this is faster than batches padded to their longest (a batch's matrices outgrow the caches; measured in
        benchmarks/reports, Recall IV). IN_FLIGHT texts run at once, each taking the next when it is done:
        one run's intra-op threads leave the cores waiting on each other for much of a run, two runs keep
        both busy (onnxruntime lets go of the GIL in a run; a session takes concurrent runs, and a run's
        result does not depend on the threads that compute it: tests/recall/test_encoder.py)."""
        np = self._np
        pieces = self._tokenizer.encode_batch([text[:MAX_TEXT_CHARS] for text in texts])
        out = np.zeros((len(pieces), client.DIMS), dtype=np.float32)
        rows = iter(range(len(pieces)))  # shared by the threads: next() on it is atomic under the GIL

        def run_rows() -> None:
            try:
                for row in rows:
                    ids = np.array([pieces[row].ids], dtype=np.int64)
                    out[row] = self._session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
            except BaseException:  # a failed run, or a signal's SystemExit: the other thread takes no more rows
                for _ in rows:
                    pass
                raise

        helpers = min(IN_FLIGHT, len(pieces)) - 1
        if helpers <= 0:
            run_rows()
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(helpers) as pool:
                others = [pool.submit(run_rows) for _ in range(helpers)]
                run_rows()
                for other in others:
                    other.result()  # a helper's exception is the request's
        return out.astype("=f4").tobytes()


class _Client:
    __slots__ = ("sock", "inbox", "outbox", "deadline", "then_stop")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.inbox = bytearray()
        self.outbox = b""
        self.deadline = time.monotonic() + CLIENT_SECONDS
        self.then_stop = False


class Server:
    def __init__(self, locs: Locations, listener: socket.socket, model: Model, idle_seconds: float) -> None:
        self.locs = locs
        self.listener = listener
        self.model = model
        self.idle_seconds = idle_seconds
        self.stamp = client.stamp()
        self.started = time.monotonic()
        self.last_request = self.started
        self.requests = 0
        self.bound = os.stat(client.SOCKET_NAME).st_ino  # the server runs in its folder
        self.selector = selectors.DefaultSelector()
        self.clients: dict[int, _Client] = {}
        self.stopping = ""
        self.nearby: Nearby | None = None  # the index's entry vectors, read when a request first asks

    def run(self) -> str:
        """Serve until a reason to stop; that reason."""
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        next_check = time.monotonic() + CHECK_SECONDS
        while not self.stopping:
            if self.nearby is None and not self.clients:
                self._load_nearby()  # at the start, not in the first prompt's answer
            now = time.monotonic()
            if not self.clients and now - self.last_request >= self.idle_seconds:
                return f"idle for {self.idle_seconds:g} s"
            if now >= next_check:
                self.stopping = self._reason_to_exit()
                next_check = now + CHECK_SECONDS
                continue
            wake = min([next_check, self.last_request + self.idle_seconds, *(c.deadline for c in self.clients.values())])
            for key, events in self.selector.select(max(0.0, wake - now)):
                if key.fileobj is self.listener:
                    self._accept()
                else:
                    self._serve(key.fd, events)
            self._drop_late()
            if self.nearby is not None and not self.clients:
                self._reload_nearby(self.nearby)
        return self.stopping

    def _load_nearby(self) -> None:
        try:
            self.nearby = Nearby(str(self.locs.index_file))
            self.nearby.reload()
        except Exception as exc:  # noqa: BLE001 - a request that asks reads them
            note(f"reading the entry vectors failed: {type(exc).__name__}")
            self.nearby = None
        release_freed_memory()  # the model's load, before any request

    def _reload_nearby(self, nearby: Nearby) -> None:
        """The index's vectors read again after the answer that found them changed, not before it."""
        try:
            if nearby.reload_if_due():
                release_freed_memory()
        except Exception as exc:  # noqa: BLE001 - the next request that asks reads them again
            note(f"reading the entry vectors failed: {type(exc).__name__}")
            self.nearby = None

    def _reason_to_exit(self) -> str:
        try:
            if os.stat(client.SOCKET_NAME).st_ino != self.bound:
                return "its socket was replaced"
        except OSError:
            return "its socket was removed"
        if not config.encoder_settings(self.locs)[0]:
            return "config.yml turned it off"
        if disk_stamp() != self.stamp:
            return "the package was upgraded"
        return ""

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors, for one: the backlog waits for the next round
                return
            if len(self.clients) >= MAX_CONNECTIONS:  # the oldest makes room: a flood cannot shut others out
                self._close(min(self.clients.values(), key=lambda c: c.deadline))
            sock.setblocking(False)
            self.clients[sock.fileno()] = _Client(sock)
            self.selector.register(sock, selectors.EVENT_READ)

    def _serve(self, fd: int, events: int) -> None:
        conn = self.clients.get(fd)
        if conn is None:
            return
        try:
            if events & selectors.EVENT_READ and not conn.outbox:
                chunk = conn.sock.recv(65536)
                if not chunk:
                    return self._close(conn)
                conn.inbox += chunk
                request = self._complete_request(conn)
                if request is not None:
                    self._answer(conn, request)
            if events & selectors.EVENT_WRITE or conn.outbox:
                self._write(conn)
        except (BlockingIOError, InterruptedError):
            pass
        except (OSError, ValueError, RecursionError):  # a broken or hostile client: it alone is dropped
            self._close(conn)
        except Exception as exc:  # noqa: BLE001 - a fault of ours must not end the server for everyone
            note(f"a request failed: {type(exc).__name__}")
            self._close(conn)

    def _complete_request(self, conn: _Client) -> dict | None:
        if len(conn.inbox) < 4:
            return None
        size = int.from_bytes(conn.inbox[:4], "big")
        if size > MAX_REQUEST:
            raise ValueError("request too large")
        if len(conn.inbox) > 4 + size:
            raise ValueError("more than one request")
        if len(conn.inbox) < 4 + size:
            return None
        request = json.loads(bytes(conn.inbox[4:]))
        conn.inbox = bytearray()
        if not isinstance(request, dict):
            raise ValueError("not an object")
        return request

    def _answer(self, conn: _Client, request: dict) -> None:
        header, body = self.handle(request)
        data = json.dumps(header).encode("utf-8")
        conn.outbox = len(data).to_bytes(4, "big") + data + body
        conn.then_stop = request.get("op") == "stop"
        self.selector.modify(conn.sock, selectors.EVENT_WRITE)

    def handle(self, request: dict) -> tuple[dict, bytes]:
        op = request.get("op")
        if op == "status":
            return {"ok": True, **self.status()}, b""
        if op == "stop":
            return {"ok": True, "stamp": self.stamp}, b""
        if op != "encode":
            return {"ok": False, "error": "unknown op", "stamp": self.stamp}, b""
        if request.get("stamp") != self.stamp:
            if disk_stamp() != self.stamp:
                self.stopping = "a newer client asked: the package was upgraded"
            return {"ok": False, "error": "stamp", "stamp": self.stamp}, b""
        texts = request.get("texts")
        if not isinstance(texts, list) or len(texts) > MAX_TEXTS or not all(isinstance(t, str) for t in texts):
            return {"ok": False, "error": f"texts: a list of at most {MAX_TEXTS} strings", "stamp": self.stamp}, b""
        try:
            body = self.model.encode(texts) if texts else b""
        except Exception as exc:  # noqa: BLE001 - one request failed; its text stays out of the log
            note(f"an encode failed: {type(exc).__name__}")
            return {"ok": False, "error": "encode failed", "stamp": self.stamp}, b""
        self.requests += 1
        self.last_request = time.monotonic()
        header = {"ok": True, "stamp": self.stamp, "count": len(texts), "dims": client.DIMS}
        if texts and isinstance(request.get("nearest"), dict):
            header.update(self.nearest(body, request["nearest"]))
        return header, body

    def nearest(self, body: bytes, asked: dict) -> dict:
        """The entries of the index nearest the first text (`nearby.Nearby`), for an encode request that
        asks: `{"nearest": [[doc id, cosine], ...], "in_scope": n}`, or nothing when it cannot be had."""
        projects, limit = asked.get("projects"), asked.get("limit")
        if (not isinstance(projects, list) or not 0 < len(projects) <= MAX_TEXTS
                or not all(isinstance(p, str) for p in projects) or type(limit) is not int):
            return {}
        try:
            if self.nearby is None:
                self.nearby = Nearby(str(self.locs.index_file))
            vector = self.model_vector(body)
            found = self.nearby.nearest(vector, projects, min(max(limit, 0), MOST))
            return {"nearest": [[doc_id, round(cosine, 5)] for doc_id, cosine in found],
                    "in_scope": self.nearby.in_scope(projects)}
        except Exception as exc:  # noqa: BLE001 - the vector still goes back; the prompt's text stays out of the log
            note(f"a nearest search failed: {type(exc).__name__}")
            return {}

    def model_vector(self, body: bytes):
        import numpy

        return numpy.frombuffer(body, dtype="=f4", count=client.DIMS)

    def status(self) -> dict:
        return {"model": self.model.name, "stamp": self.stamp, "pid": os.getpid(), "rss_bytes": rss_bytes(),
                "uptime_s": round(time.monotonic() - self.started, 1), "requests": self.requests,
                "idle_seconds": self.idle_seconds}

    def _write(self, conn: _Client) -> None:
        sent = conn.sock.send(conn.outbox)
        conn.outbox = conn.outbox[sent:]
        if not conn.outbox:
            if conn.then_stop:
                self.stopping = "told to stop"
            self._close(conn)

    def _drop_late(self) -> None:
        now = time.monotonic()
        for conn in [c for c in self.clients.values() if c.deadline <= now]:
            self._close(conn)

    def _close(self, conn: _Client) -> None:
        self.clients.pop(conn.sock.fileno(), None)
        try:
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()

    def close(self) -> None:
        for conn in list(self.clients.values()):
            self._close(conn)
        self.selector.close()


def disk_stamp() -> str:
    """The stamp of the package as it is on disk now (the running code may be older)."""
    init = read_regular_text(os.path.join(client.CODE_ROOT, "harnesslink_core", "__init__.py"), 1 << 16) or ""
    version = next((line.split("=", 1)[1].strip().strip("\"'") for line in init.splitlines()
                    if line.startswith("__version__")), "?")
    return client.stamp_of(version)


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def release_freed_memory() -> None:
    """Hand back to the system what the C heap holds freed: glibc keeps the pages of what the model's load
    freed, some 60 MB (measured in benchmarks/reports/2026-12-02-recall-iv.md). Not glibc: nothing."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def note(line: str) -> None:
    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} encoder[{os.getpid()}]: {line}\n")
    sys.stderr.flush()


def private_folder(locs: Locations) -> Path:
    """The encoder's folder, made 0700; OSError if it is not a folder of this user's (a link, a file)."""
    folder = locs.encoder_dir
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if not os.path.isdir(folder) or os.path.islink(folder) or st.st_uid != os.getuid():
        raise OSError(f"{folder} is not a folder of this user's")
    os.chmod(folder, 0o700)
    return folder


def take_lock(folder: Path) -> int | None:
    """The lock's descriptor, held for the life of the process, or None when another server holds it.
    A few tries: a client's probe (`encoder_client._lock_held`) holds it for a moment."""
    import fcntl

    fd = os.open(folder / client.LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    for _ in range(10):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            time.sleep(0.01)
    os.close(fd)
    return None


def bind(folder: Path) -> socket.socket:
    """A listening socket at `encoder/sock`, 0600, put in place whole (over a dead server's)."""
    os.chdir(folder)  # a relative name: the folder's path may be longer than a socket address holds
    temporary = f"{client.SOCKET_NAME}.{os.getpid()}"
    if os.path.lexists(temporary):
        os.unlink(temporary)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(temporary)
    finally:
        os.umask(mask)
    os.chmod(temporary, 0o600)
    listener.listen(64)
    os.replace(temporary, client.SOCKET_NAME)
    return listener


def hold(locs: Locations, why: str) -> None:
    """Note why no server is to be spawned for now (encoder_client._held reads it)."""
    from ..atomic import atomic_write

    note_ = {"why": why, "stamp": client.stamp(), "at": time.time(), "config": client.config_stamp(locs)}
    atomic_write(locs.encoder_dir / client.HELD_NAME, json.dumps(note_))


def serve(locs: Locations, idle_seconds: float | None = None) -> int:
    """Serve until idle, stopped, switched off or outdated; 0 also when another server already serves."""
    folder = private_folder(locs)
    _trim_log(locs)
    lock = take_lock(folder)
    if lock is None:
        return 0
    enabled, idle_minutes = config.encoder_settings(locs)
    if not enabled:
        hold(locs, "off")
        note("recall.encoder is false in config.yml: not started")
        return 0
    started = time.monotonic()
    _one_blas_thread()
    try:
        model = Model()
    except Exception as exc:  # noqa: BLE001 - no runtime, no model: the hooks go on without it
        hold(locs, "unavailable")
        note(f"cannot load the model: {type(exc).__name__}: {exc}")
        return 1
    listener = bind(folder)
    (folder / client.HELD_NAME).unlink(missing_ok=True)
    server = Server(locs, listener, model, idle_seconds if idle_seconds is not None else idle_minutes * 60)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGINT, _exit_on_signal)
    note(f"serving {model.name} ({server.stamp}) after {time.monotonic() - started:.2f} s, rss {rss_bytes() >> 20} MB")
    reason = "a signal"
    try:
        reason = server.run()
    finally:
        server.close()
        _remove_socket(server.bound)
        listener.close()
        note(f"exiting: {reason}")
    return 0


def _one_blas_thread() -> None:
    """numpy's BLAS on one thread, before numpy loads. The nearest search is one matrix-vector product
    (1 ms on one thread at 10,000 entries, 6 ms at 100,000); with a thread per core, OpenBLAS's threads
    then spin for some 40 ms of CPU after every answer, on the core the prompt hook that asked still runs
    on (measured in benchmarks/reports/2026-12-02-recall-iv.md). The model's threads are onnxruntime's own
    (`Model`)."""
    for name in BLAS_THREADS:
        os.environ[name] = "1"


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(0)


def _remove_socket(inode: int) -> None:
    """Unlink the socket if it is still the one this process bound (not a newer server's)."""
    try:
        if os.stat(client.SOCKET_NAME).st_ino == inode:
            os.unlink(client.SOCKET_NAME)
    except OSError:
        pass


def _trim_log(locs: Locations) -> None:
    """Start logs/encoder.log afresh when it has grown past MAX_LOG_BYTES, if it is this process's stderr."""
    try:
        err, log = os.fstat(2), os.stat(locs.encoder_log)
        if (err.st_dev, err.st_ino) == (log.st_dev, log.st_ino) and err.st_size > MAX_LOG_BYTES:
            os.ftruncate(2, 0)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harnesslink_core.recall.encoder")
    parser.add_argument("action", choices=["serve"])
    parser.add_argument("--idle-seconds", type=float, help="exit after this long without a request")
    args = parser.parse_args(argv)
    return serve(locations(), args.idle_seconds)


if __name__ == "__main__":
    raise SystemExit(main())
