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

import sys


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

        sys.modules["functools"] = _Functools  # type: ignore[assignment]
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


sqlite3 = _load()


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
