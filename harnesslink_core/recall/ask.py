"""A pull as every caller makes it (`memory_search`, `harnesslink recall`, the brief's recall section,
`harnesslink view`'s search): the index opened once, brought up to date for the scope, another
folder's entries sharing a slug kept out, the scope's trust state and the entries' use read, then
`pull.recall` ranks, with the query's vector from the resident encoder when it answers in time.
Callers only format what `ask` gives.
"""

from __future__ import annotations

from ..store import trust
from ..store.injected import use_counts
from ..store.scope import all_projects
from .encoder_client import Encoding
from .index import open_index, sync
from .pull import recall
from .query import foreign_paths

ENCODER_DEADLINE_MS = 500  # a pull was asked for: it may wait longer than a hook, never long

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..paths import Locations
    from ..store.scope import Folders
    from .query import Hit


def ask(locs: Locations, query: str, folders: Folders | None, *, limit: int,
        as_of: float | None = None, known_at: float | None = None,
        busy_ms: int = 5000) -> tuple[list[Hit], trust.TrustState]:
    """The entries that best answer `query` within the scope `folders` (`scope.scope_folders`; None: every
    project), best first, with the trust state that labels them, taken at a moment when given: `as_of` by
    the time the work happened, `known_at` by the time memory recorded it (`store.trust.TrustState`).
    Raises IndexUnavailable when the index cannot be opened, sqlite3.OperationalError when it is busy."""
    projects = None if folders is None else list(folders)
    state = trust.state(locs, all_projects(locs) if projects is None else projects,
                        as_of=as_of, known_at=known_at)
    encoding = Encoding(locs, [query], ENCODER_DEADLINE_MS)  # answered while the index is brought up to date
    try:
        with open_index(locs, busy_ms=busy_ms) as conn:
            sync(conn, locs, projects)
            hidden = foreign_paths(conn, folders) if folders else set()
            return recall(conn, query, projects, limit=limit, exclude_paths=hidden, trust=state,
                          use=use_counts(locs), encoding=encoding), state
    finally:
        encoding.close()
