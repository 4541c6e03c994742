"""The resident encoder's client (the server is recall/encoder.py): sentence vectors within a hard deadline.

A hook may ask; it must never wait past its budget, nor fail, for it. `encode` returns None whenever
the encoder is absent, late, broken or of another version (its stamp differs), measured by its own
clock: the connect never blocks (a full backlog is a None), and every read and write has a timeout of
what is left. `ensure_started` spawns the server, detached, without waiting for it: for a hook to call
once its answer is out.

Cheap to import, for the prompt hook's path (tests/hooks/test_hot_path.py): `_socket`, not `socket` (which
imports enum and selectors), and only once a socket of ours is there to connect to (with no encoder the
hook loads neither it nor the stamp); lengths with int.to_bytes, vectors read with memoryview.cast, JSON
through wirejson.

The protocol, one request per connection: a 4-byte big-endian length and that many bytes of a JSON
object, `{"op": "encode" | "status" | "stop", "stamp": ..., "texts": [...]}`; the answer is framed the
same way, and for `encode` followed by exactly count × DIMS float32 values (native byte order). An
encode request may add `"nearest": {"projects": [...], "limit": N}`: its answer then names, under
`"nearest"`, the N entries of the server's own index in those projects closest to the first text,
`[[doc id, cosine], ...]` best first (recall/nearby.py), and under `"in_scope"` how many entry vectors
those projects hold.
"""

from __future__ import annotations

import os
import sys
import time

from .. import __version__, wirejson
from ..safefile import read_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    import _socket

PROTOCOL = 2
DIMS = 384
SOCKET_NAME = "sock"
LOCK_NAME = "lock"
HELD_NAME = "held"  # why the server is not to be started again for now (its config, its failure)
RETRY_SECONDS = 600  # after a server that could not load its model, before another is spawned
MAX_HEADER = 64 * 1024
READ_GRACE = 0.001  # seconds to read an answer already there when the deadline has passed
NEAREST_ASKED = 16  # the prompt hook asks for this many nearest entries (some may be the session's own, or out of scope)
LONGEST_ADDRESS = 100  # sun_path holds 108 bytes: a longer path is reached through the folder's descriptor
CODE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = os.path.join(CODE_ROOT, "harnesslink_core", "data", "encoder", "manifest.json")

_stamp: str | None = None


def stamp() -> str:
    """This package's version, the protocol and the model's hash: a server stamped otherwise is not used."""
    global _stamp
    if _stamp is None:
        _stamp = stamp_of(__version__)
    return _stamp


def stamp_of(version: str) -> str:
    data = read_regular(MANIFEST, MAX_HEADER)
    try:
        model = str(wirejson.loads(data.decode("utf-8"))["sha256"])[:16]  # type: ignore[union-attr]
    except (AttributeError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        model = "none"
    return f"{version}/{PROTOCOL}/{model}"


def encode(locs, texts: list[str], deadline_ms: float) -> list[list[float]] | None:
    """One L2-normalised vector of DIMS floats per text, or None if no answer came within `deadline_ms`."""
    return Encoding(locs, texts, deadline_ms).vectors()


class Encoding:
    """One encode request, sent at once and read when wanted (`vectors`), so that the asker works in
    the meantime; the deadline runs from the send. Never raises; `why` says what went wrong, if anything."""

    def __init__(self, locs, texts: list[str], deadline_ms: float, *, nearest: list[str] | None = None,
                 limit: int = 0) -> None:
        """`nearest`: the projects whose entries closest to the first text the answer names too (`limit` of them)."""
        self.started = time.monotonic()
        self.end = self.started + deadline_ms / 1000
        self.deadline_ms = deadline_ms
        self.count = 0
        self.why = ""
        self.took_ms: float | None = None
        self._vectors: list[list[float]] | None = None
        self._nearest: list[tuple[int, float]] | None = None
        self.in_scope = 0
        self._sent: tuple[_socket.socket, int | None] | None = None
        try:
            texts = [str(t) for t in texts]
            self.count = len(texts)
            request: dict = {"op": "encode", "texts": wirejson.without_lone_surrogates(texts)}
            if nearest and limit > 0:
                request["nearest"] = {"projects": [str(p) for p in nearest], "limit": int(limit)}
            self._sent = send(locs, request, self.end)
            if self._sent is None:
                self.why = "no encoder at the socket"
        except Exception:  # noqa: BLE001 - whatever happens, the asker goes on without vectors
            self.why = "the request failed"

    def vectors(self) -> list[list[float]] | None:
        """The vectors, waiting at most until the deadline (once; later calls give the same)."""
        if self._sent is None:
            return self._vectors
        sent, self._sent = self._sent, None
        try:
            # an answer that came in time is taken even when the asker reads it later (a moment to read it)
            end = max(self.end, time.monotonic() + READ_GRACE)
            answer = receive(*sent, end, self.count * DIMS * 4)
            if answer is None or answer[0].get("ok") is not True or answer[0].get("count") != self.count:
                self.why = (f"no answer within {self.deadline_ms:g} ms" if time.monotonic() >= end
                            else "no usable answer (closed, refused, or another version)")
                return None
            floats = memoryview(answer[1]).cast("f")
            # typeshed's tolist says list[int] whatever the format; typing.cast would cost the prompt hook's path
            self._vectors = [floats[i * DIMS:(i + 1) * DIMS].tolist() for i in range(self.count)]  # type: ignore[misc]
            self._nearest = _pairs(answer[0].get("nearest"))
            in_scope = answer[0].get("in_scope")
            self.in_scope = in_scope if isinstance(in_scope, int) and in_scope >= 0 else 0
            self.took_ms = (time.monotonic() - self.started) * 1000
        except Exception:  # noqa: BLE001
            self.why = "a broken answer"
        return self._vectors

    def nearest(self) -> list[tuple[int, float]] | None:
        """The entries closest to the first text, (doc id, cosine) best first, when asked for and answered in
        time (waits as `vectors` does); None otherwise."""
        return self._nearest if self.vectors() is not None else None

    @property
    def may_answer(self) -> bool:
        """Whether `vectors` can still give vectors (the request went out, or they came): when not, nothing
        need be read to compare them with."""
        return self._sent is not None or self._vectors is not None

    @property
    def absent(self) -> bool:
        """No server took the request (none runs, a dead one's socket, something else at its place)."""
        return self.why == "no encoder at the socket"

    def close(self) -> None:
        """Drop the request if its answer was never read."""
        if self._sent is not None:
            _close(*self._sent)
            self._sent = None


def _pairs(found) -> list[tuple[int, float]] | None:
    """The answer's `nearest`, checked: a list of [int, number] pairs, or None."""
    if not isinstance(found, list):
        return None
    pairs = []
    for pair in found:
        if (not isinstance(pair, list) or len(pair) != 2 or type(pair[0]) is not int
                or not isinstance(pair[1], (int, float)) or isinstance(pair[1], bool)):
            return None
        pairs.append((pair[0], float(pair[1])))
    return pairs


def status(locs, deadline_ms: float = 500) -> dict | None:
    """What the running server says of itself (its stamp may differ from ours), or None."""
    return _simple(locs, "status", deadline_ms)


def stop(locs, deadline_ms: float = 2000) -> bool:
    """Tell the running server to exit (of whatever version); False if none answered."""
    return _simple(locs, "stop", deadline_ms) is not None


def _simple(locs, op: str, deadline_ms: float) -> dict | None:
    try:
        answer = ask(locs, {"op": op}, time.monotonic() + deadline_ms / 1000, 0, same_stamp=False)
        return answer[0] if answer is not None and answer[0].get("ok") is True else None
    except Exception:  # noqa: BLE001
        return None


def ask(locs, request: dict, end: float, body_size: int, same_stamp: bool = True) -> tuple[dict, bytearray] | None:
    """Send `request`, read the answer's header and `body_size` bytes after it, all before `end`
    (time.monotonic); None for no answer, a bad one, or one stamped otherwise (with `same_stamp`)."""
    sent = send(locs, request, end)
    return None if sent is None else receive(*sent, end, body_size, same_stamp)


def send(locs, request: dict, end: float) -> tuple[_socket.socket, int | None] | None:
    """Connect and send `request` before `end`: what `receive` reads the answer from, or None (no
    server, a full backlog, not a socket of ours, too late)."""
    address, folder_fd = socket_address(locs.encoder_path)
    if not _ours(address):  # no encoder, the usual case once it idled out: no socket made, no stamp read
        if folder_fd is not None:
            os.close(folder_fd)
        return None
    import _socket

    payload = wirejson.dumps({**request, "stamp": stamp()}).encode("utf-8")
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.setblocking(False)
        sock.connect(address)  # never waits: a full backlog is a BlockingIOError, no queueing behind it
        if _send(sock, len(payload).to_bytes(4, "big") + payload, end):
            return sock, folder_fd
    except OSError:
        pass
    _close(sock, folder_fd)
    return None


def receive(sock, folder_fd: int | None, end: float, body_size: int,
            same_stamp: bool = True) -> tuple[dict, bytearray] | None:
    """The answer to what `send` sent (see `ask`); the socket is closed after."""
    try:
        head = _receive(sock, 4, end)
        size = int.from_bytes(head, "big") if head is not None else MAX_HEADER + 1
        header = _receive(sock, size, end) if size <= MAX_HEADER else None
        if header is None:
            return None
        answer = wirejson.loads(header.decode("utf-8"))
        if not isinstance(answer, dict) or (same_stamp and answer.get("stamp") != stamp()):
            return None
        if answer.get("ok") is not True or not body_size:
            return answer, bytearray()
        body = _receive(sock, body_size, end)
        return None if body is None else (answer, body)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    finally:
        _close(sock, folder_fd)


def _close(sock, folder_fd: int | None) -> None:
    sock.close()
    if folder_fd is not None:
        os.close(folder_fd)


def socket_address(folder: str) -> tuple[str, int | None]:
    """The path to connect (or bind) to, and the descriptor of the folder that path goes through, if
    the folder's own path is too long for a Unix socket address (the caller closes it)."""
    path = os.path.join(folder, SOCKET_NAME)
    if len(os.fsencode(path)) <= LONGEST_ADDRESS:
        return path, None
    fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{SOCKET_NAME}", fd


def _ours(address: str) -> bool:
    """A socket of this user's (not a file, a FIFO, or someone else's socket planted in its place)."""
    try:
        st = os.lstat(address)
    except OSError:
        return False
    return st.st_mode & 0o170000 == 0o140000 and st.st_uid == os.getuid()


def _left(end: float) -> float | None:
    left = end - time.monotonic()
    return left if left > 0 else None


def _send(sock, data: bytes, end: float) -> bool:
    left = _left(end)
    if left is None:
        return False
    sock.settimeout(left)
    sock.sendall(data)  # the timeout bounds the whole send (Python 3.5 on)
    return True


def _receive(sock, size: int, end: float) -> bytearray | None:
    """Exactly `size` bytes, or None when the peer closes first or `end` passes."""
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        left = _left(end)
        if left is None:
            return None
        sock.settimeout(left)
        count = sock.recv_into(view[got:])
        if not count:
            return None
        got += count
    return data


# starting the server


def ensure_started(locs) -> bool:
    """Spawn the encoder, detached, unless it runs, is starting, is switched off or just failed to
    load: True if one was spawned. Never waits for it, never raises."""
    try:
        if _held(locs) or _running(locs):
            return False
        _spawn(locs)
        return True
    except Exception:  # noqa: BLE001 - a hook's bookkeeping: nothing to report to anyone
        return False


def _running(locs) -> bool:
    """A server accepts on the socket, or one holds the lock (it is loading its model)."""
    address, folder_fd = socket_address(locs.encoder_path) if os.path.isdir(locs.encoder_path) else ("", None)
    if not address:
        return False
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.setblocking(False)
        if _ours(address):
            try:
                sock.connect(address)
                return True
            except BlockingIOError:  # accepting, only busy
                return True
            except OSError:
                pass
    finally:
        sock.close()
        if folder_fd is not None:
            os.close(folder_fd)
    return _lock_held(os.path.join(locs.encoder_path, LOCK_NAME))


def _lock_held(path: str) -> bool:
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def config_stamp(locs) -> list[int] | None:
    """config.yml's mtime, size and inode: a `held` note for a switched-off encoder lasts while they hold."""
    try:
        st = os.lstat(os.path.join(locs.agent_path, "config.yml"))
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _held(locs) -> bool:
    data = read_regular(os.path.join(locs.encoder_path, HELD_NAME), MAX_HEADER)
    try:
        note = wirejson.loads(data.decode("utf-8"))  # type: ignore[union-attr]
    except (AttributeError, ValueError, UnicodeDecodeError):
        return False
    if not isinstance(note, dict):
        return False
    if note.get("why") == "off":
        return note.get("config") == config_stamp(locs)
    at = note.get("at")
    return (note.get("stamp") == stamp() and isinstance(at, (int, float))
            and 0 <= time.time() - at < RETRY_SECONDS)


def _spawn(locs) -> None:
    """`python -m harnesslink_core.recall.encoder serve` in a session of its own, a grandchild (so no
    caller is left a zombie to reap), stdin from /dev/null, stdout and stderr to logs/encoder.log."""
    log = os.path.join(locs.agent_path, "logs", "encoder.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    env = dict(locs.env)
    env["HARNESSLINK_HOME"] = locs.agent_path
    env["PYTHONPATH"] = os.pathsep.join(p for p in (CODE_ROOT, env.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, "-m", "harnesslink_core.recall.encoder", "serve"]
    child = os.fork()
    if child == 0:
        try:
            if os.fork() == 0:
                os.setsid()
                stdin = os.open(os.devnull, os.O_RDONLY)
                out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
                os.dup2(stdin, 0)
                os.dup2(out, 1)
                os.dup2(out, 2)
                os.execve(sys.executable, argv, env)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
