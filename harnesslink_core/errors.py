"""What can go wrong, and how it is told: every exception class the package raises on purpose, and
`describe`, which turns any exception into one line a user can act on (the CLI prints it; the
traceback goes to the log).

`HarnessLinkError` is the base of the failures a user (or, for the memory tools, the model) can do
something about: its message is that line, as it is. Standard library only, and nothing imported
at start (the index's errors are raised on the prompt hook's path; install.py runs before the
private environment exists).
"""

from __future__ import annotations

from .paths import Locations


class HarnessLinkError(Exception):
    """A failure the user can act on; its message is the line they see."""


class ConfigError(HarnessLinkError):
    """config.yml exists but cannot be understood."""


class IndexUnavailable(HarnessLinkError):
    """The index cannot be used right now (missing, corrupt, locked, old schema)."""


class IndexCorrupt(IndexUnavailable):
    """The file is not a usable database: delete it and rebuild."""


class IndexBehind(Exception):
    """More changed entries than the caller is willing to index inline (a signal, not a failure)."""


class PassBusy(HarnessLinkError):
    """Another writer kept the pass lock past the wait (`store.lock.holding`)."""


class LockLost(Exception):
    """An autobank pass could not take its lock back to commit what it read: it is read again next pass
    (a signal inside the pass, never shown)."""


class ForgetError(HarnessLinkError):
    """A forget request that cannot be carried out."""


class NoMatch(ForgetError):
    def __init__(self, ids: list[str]) -> None:
        super().__init__("no entry matches " + ", ".join(repr(i) for i in ids))
        self.ids = ids


class NoSuchEntry(HarnessLinkError):
    """An entry id that names no entry in the caller's scope (`store.lookup.find_entry`)."""


class TrustError(HarnessLinkError):
    """A supersession or confirmation that is refused (out of scope, not newer, a cycle, nothing to undo)."""


class ToolError(HarnessLinkError):
    """A memory-tool call that cannot be done as asked; the message tells the model what to change."""


class ResumeError(HarnessLinkError):
    """Bad input to `harnesslink resume` the user can fix: printed as it is, exit code 2."""


class Refused(HarnessLinkError):
    """install will not touch this file; `hint` tells the user what to do about it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


class EnvironmentFailed(HarnessLinkError):
    """The private environment could not be made; `hint` says what to try."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def describe(exc: BaseException, locs: Locations) -> str:
    """One line, secrets redacted, no traceback."""
    from .redact import redact

    return " ".join(redact(_describe(exc, locs)).split())


def _describe(exc: BaseException, locs: Locations) -> str:
    import sqlite3

    from .fastsqlite import NotARegularFile

    if isinstance(exc, HarnessLinkError):
        return str(exc)
    if isinstance(exc, _lock_timeout()):
        return f"another HarnessLink pass holds {locs.pass_lock}; try again in a moment"
    if isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
        what = _os_words().get(exc.errno or 0) or exc.strerror or str(exc)
        where = exc.filename or locs.agent_dir
        return f"{what}: {where}"
    if isinstance(exc, NotARegularFile):
        return str(exc)
    if isinstance(exc, sqlite3.Error):
        return _database(exc, locs)
    return f"unexpected {type(exc).__name__}: {exc} (details in {locs.log_file})"


def _lock_timeout() -> tuple[type[BaseException], ...]:
    try:
        from filelock import Timeout
    except ImportError:  # install.py's interpreter: no pass lock there
        return ()
    return (Timeout,)


def _os_words() -> dict[int, str]:
    import errno

    return {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
            errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
            errno.EROFS: "read-only file system"}


def _database(exc: BaseException, locs: Locations) -> str:
    message = str(exc)
    lower = message.lower()
    db = _damaged_db(locs)
    if "locked" in lower or "busy" in lower:
        return f"the database is locked by another process ({message}); try again in a moment"
    if "full" in lower:
        return f"no space left on the device for the database under {locs.agent_dir} ({message})"
    if "readonly" in lower or "read-only" in lower or "unable to open" in lower:
        return f"cannot write the database under {locs.agent_dir}: permission denied or read-only ({message})"
    if db is not None:
        if db == locs.index_file:
            return f"the search index {db} is damaged ({message}); `harnesslink reindex` rebuilds it"
        return (f"the ledger {db} is damaged ({message}); move it aside and run `harnesslink backfill` "
                f"to rebuild it (entries already written are found again, not duplicated)")
    return f"database error: {message} (under {locs.agent_dir})"


def _damaged_db(locs: Locations):
    """The first of our databases that fails a quick check, if any."""
    import os
    import sqlite3

    from .fastsqlite import connect

    for path in (locs.ledger_file, locs.index_file):
        if not os.path.exists(path):
            continue
        try:
            db = connect(str(path), read_only=True, timeout=0.2)
            try:
                ok = db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            finally:
                db.close()
        except sqlite3.OperationalError:
            continue  # locked, not damaged
        except sqlite3.DatabaseError:
            ok = False
        if not ok:
            return path
    return None
