"""SQLite for the hooks: the C module `_sqlite3`, loaded without what it would pull in.

`import sqlite3` adds datetime and its adapters; `_sqlite3` alone does not, but its
initialisation asks `functools` for `lru_cache` (its statement cache), and importing
`functools` imports `collections`, `operator`, `reprlib` and more. Measured with
callgrind in the installed venv: `import _sqlite3` costs 37 % of a bare interpreter's
start, 12 % when `functools` is served by the few lines below, which build the same
C cache (`_functools._lru_cache_wrapper`, what `functools.lru_cache` returns). The
stand-in is in `sys.modules` only while `_sqlite3` initialises; any later `import
functools` gets the real module. Where this does not work (another Python, a
`_sqlite3` that needs more of `functools`), the plain import is used.

`sqlite3` here is the C module: the same `connect`, `Connection` and exception
classes as the `sqlite3` package (which re-exports them).
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)


def _load():
    if "functools" in sys.modules or "_sqlite3" in sys.modules:
        import _sqlite3

        return _sqlite3
    try:
        import _functools

        wrapper = _functools._lru_cache_wrapper

        class _Functools:  # noqa: N801 - stands in for the module while _sqlite3 initialises
            @staticmethod
            def lru_cache(maxsize=128, typed=False):
                return lambda function: wrapper(function, maxsize, typed, tuple)

        sys.modules["functools"] = _Functools
        try:
            import _sqlite3
        finally:
            del sys.modules["functools"]
        return _sqlite3
    except Exception:  # noqa: BLE001 - not CPython 3.11-like: the ordinary way
        sys.modules.pop("_sqlite3", None)
        try:
            import _sqlite3
        except ImportError:
            import sqlite3 as _sqlite3
        return _sqlite3


if TYPE_CHECKING:
    import sqlite3  # what `_load` returns has the package's API
else:
    sqlite3 = _load()

SIDE_FILES = ("-wal", "-shm", "-journal")
BUSY_STEP_MS = 100


class NotARegularFile(sqlite3.OperationalError):
    """A database, or one of its side files, that is not a regular file: never opened. SQLite opens what is
    there without asking what it is, and a FIFO holds whoever opens it read-only until it is killed."""


def refusal(path: str) -> str | None:
    """Why the database at `path` must not be opened (a FIFO, a symlink, a folder, a socket or a device
    as it or as its -wal, -shm or -journal file), or None: each is a regular file itself, or not there."""
    for name in (path, *(path + suffix for suffix in SIDE_FILES)):
        try:
            mode = os.lstat(name).st_mode
        except (OSError, ValueError):
            continue  # not there (SQLite makes it), or not ours to judge: SQLite's own open fails
        if not stat.S_ISREG(mode):
            return f"{name} is {_kind(mode)}, not a regular file: it is not opened (remove it to go on)"
    return None


def _kind(mode: int) -> str:
    for test, words in ((stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "a device"


def usable(path: str) -> bool:
    """Whether the database at `path` is there and may be opened (`refusal`)."""
    return os.path.exists(path) and refusal(path) is None


def connect(path: str, *, read_only: bool = False, immutable: bool = False, **options):
    """The one way our code opens a database file: `sqlite3.connect(path, **options)` (read-only, and
    immutable too, by a URI), once `refusal` finds nothing wrong with it; NotARegularFile otherwise."""
    why = refusal(path)
    if why is not None:
        raise NotARegularFile(why)
    if _deadline_running():
        options.setdefault("factory", WithinDeadline)
    if not (read_only or immutable):
        return sqlite3.connect(path, **options)
    uri = "file:" + path.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    return sqlite3.connect(uri + ("&immutable=1" if immutable else ""), uri=True, **options)


class Transaction:
    """`with Transaction(conn):` is BEGIN IMMEDIATE … COMMIT, ROLLBACK on any error; a nested use
    joins the outer transaction. The one way our code writes a database in a transaction."""

    def __init__(self, db) -> None:
        self.db = db
        self.outer = False

    def __enter__(self):
        self.outer = not self.db.in_transaction
        if self.outer:
            self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if not self.outer:
            return
        if exc_type is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # sqlite may have rolled back already (a full disk)
            self.db.execute("ROLLBACK")


class WithinDeadline(sqlite3.Connection):
    """A connection opened under a hook's deadline (`store.deadline`): SQLite waits for a lock up to its busy
    timeout at every statement, so before each one the timeout comes down to what is left of the deadline
    (in steps of BUSY_STEP_MS: a statement may end that much past it), and goes back to its own once the
    deadline is over (the connection may outlive it)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.own_ms = self.busy_ms = int(kwargs.get("timeout", 5.0) * 1000)
        self._within()

    def execute(self, sql: str, parameters=(), /):
        self._within()
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters, /):
        self._within()
        return super().executemany(sql, parameters)

    def _within(self) -> None:
        left_ms = int(_within_deadline(self.own_ms / 1000) * 1000)
        if left_ms < self.busy_ms - BUSY_STEP_MS or (left_ms == 0 < self.busy_ms) or left_ms > self.busy_ms:
            self.busy_ms = left_ms
            super().execute(f"PRAGMA busy_timeout={left_ms}")


def _deadline_running() -> bool:
    deadline = sys.modules.get("harnesslink_core.store.deadline")
    return deadline is not None and deadline.running()


def _within_deadline(seconds: float) -> float:
    """A busy timeout of `seconds`, or what is left of the hook's deadline when less (`store.deadline`: looked up,
    never imported here, so that a hook that starts no deadline does not import it)."""
    deadline = sys.modules.get("harnesslink_core.store.deadline")
    return seconds if deadline is None else deadline.left(seconds)
