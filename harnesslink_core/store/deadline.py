"""One hook's time, shared by every wait on its path: the session-start hook answers within it whatever
locks it meets (SPEC §7).

`with within(seconds):` runs its block under a deadline that many seconds away; every wait inside asks
`left(own)` how long it may take: its own bound, or what is left of the deadline when that is less (0 once
it is spent). Outside a block, `left(own)` is `own`. The waits that ask: the pass lock
(`store.lock.PassLock`) and SQLite's busy timeout of every connection opened and every statement
run (`fastsqlite`, which looks for this module in `sys.modules` rather than import it: the prompt hook
never starts a deadline).
"""

from __future__ import annotations

import time

_ends: float | None = None  # time.monotonic() of the deadline of the block that runs, if one does


class within:  # noqa: N801 - used as a `with` statement, like a function
    """`with within(seconds):` a deadline `seconds` from now (an outer one that ends sooner still holds);
    `within(leaving=seconds)`: one that ends `seconds` before the outer one (none when no deadline runs)."""

    def __init__(self, seconds: float | None = None, *, leaving: float = 0.0) -> None:
        self.seconds, self.leaving = seconds, leaving
        self.outer: float | None = None

    def __enter__(self) -> within:
        global _ends
        self.outer = _ends
        if self.seconds is not None:
            ends = time.monotonic() + self.seconds
            _ends = ends if self.outer is None else min(ends, self.outer)
        elif self.outer is not None:
            _ends = self.outer - self.leaving
        return self

    def __exit__(self, *exc: object) -> None:
        global _ends
        _ends = self.outer


def running() -> bool:
    return _ends is not None


def has_left(seconds: float) -> bool:
    """Whether `seconds` are left (always, outside a block)."""
    return left(seconds) >= seconds


def left(own: float) -> float:
    """How long a wait whose own bound is `own` seconds may take now."""
    if _ends is None:
        return own
    return max(0.0, min(own, _ends - time.monotonic()))
