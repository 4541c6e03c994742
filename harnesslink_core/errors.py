"""What went wrong, in one line a user can act on (the CLI prints it; the traceback goes to the log)."""

from __future__ import annotations

import errno
import os
import sqlite3

from .paths import Locations

_OS_WORDS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
}


def describe(exc: BaseException, locs: Locations) -> str:
    """One line, secrets redacted, no traceback."""
    from .redact import redact

    return " ".join(redact(_describe(exc, locs)).split())


def _describe(exc: BaseException, locs: Locations) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, TimeoutError) and type(exc).__name__ != "Timeout":
        what = _OS_WORDS.get(exc.errno or 0) or exc.strerror or str(exc)
        where = exc.filename or locs.agent_dir
        return f"{what}: {where}"
    if isinstance(exc, sqlite3.Error):
        return _database(exc, locs)
    name = type(exc).__name__
    if name == "Timeout":  # filelock
        return f"another HarnessLink pass holds {locs.pass_lock}; try again in a moment"
    if name in ("ForgetError", "NoMatch", "ConfigError", "IndexUnavailable", "IndexCorrupt"):
        return str(exc)
    return f"unexpected {name}: {exc} (details in {locs.log_file})"


def _database(exc: sqlite3.Error, locs: Locations) -> str:
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
    for path in (locs.ledger_file, locs.index_file):
        if not os.path.exists(path):
            continue
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2)
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
