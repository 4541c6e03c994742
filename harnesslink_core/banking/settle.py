"""Settle, the pass's third stage: which turns of a reading are finished, and what becomes of each.

Takes a `read.FileWork` (its reading, the stop signal, the harness's window); fills in its settled turns
as `prepared`, ("bank" | "skipped" | "drop" | "excluded", turn, entry), each banked turn's entry rendered
(unless the read-ahead's child rendered it), and `still_open`: the offset of each turn not finished yet
and when to look at it again. The rules are `settle()`'s (SPEC §4): a turn is finished when the harness
closed it, a later turn started, its session's stop signal came, or its transcript went quiet. It also
notes each banked turn's checkpoint and the session facts for the state files (`finish`). No lock.
"""

from __future__ import annotations

from ..harnesses.base import is_our_action, strip_injected
from ..model import StateUpdate
from ..redact import redact
from ..store import bank
from . import use
from .plan import kept_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model import Reading, Turn
    from ..redact import Memo
    from ..store.bank import Entry
    from .pass_state import FileWork, PassState, StopSignal

QUIET = 300.0  # a transcript quiet this long settles its answered last turn
GIVE_UP = 7 * 86400.0  # a turn still waiting after this long is dropped
SKIP_RESULT_CHARS = 200


def settle(turn: Turn, last: bool, stopped_at: float | None, quiet: float, *, stop_named: bool = False) -> str:
    """"bank", "drop" or "open": whether a turn is finished (SPEC §4).

    `stopped_at`: when a stop signal last came for the turn's session; `quiet`: seconds since the
    turn or its transcript last changed; `stop_named`: this pass's stop signal names this very turn
    and the answer it ended with (Codex).
    """
    if turn.aborted:
        return "drop"
    if turn.closed:
        return "bank"
    if not last:
        # a later turn started: this one is over (Codex: never completed, so not banked)
        return "drop" if turn.needs_end_marker else "bank"
    if turn.needs_end_marker:
        if stop_named and turn.pending_tools == 0:
            # Codex runs its Stop hook before it writes task_complete: the hook's own word is the end marker
            return "bank"
        return "drop" if quiet >= GIVE_UP else "open"
    answered = _answered(turn)
    if answered and stopped_at is not None and stopped_at + 2.0 >= turn.ended:
        return "bank"
    if answered and quiet >= QUIET:
        return "bank"
    if quiet >= GIVE_UP:
        return "drop"
    return "open"


def settle_file(p: PassState, work: FileWork, window: float, stop: StopSignal | None) -> None:
    """A read transcript's turns settled and prepared, and its session facts noted (see the module docstring)."""
    reading = work.reading
    session = reading.session
    if reading.excluded is None:
        settled, work.still_open = _verdicts(p, work.name, reading, work.st.st_mtime, work.session_id,
                                             work.kept_out_until, stop)
        work.prepared = prepare(p, settled, window, session.cwd if session else "", work.rendered)
    if session is not None and reading.states and work.kept_out_until is None:
        note_states(p, session.harness, session.session_id, session.cwd, reading.states)


def _verdicts(p: PassState, name: str, reading: Reading, mtime: float, session_id: str | None,
              kept_out_until: int | None, stop: StopSignal | None,
              ) -> tuple[list[tuple[Turn, str]], list[tuple[int, float]]]:
    """Each turn's verdict (SPEC §4): the settled turns, and (offset, when to look again) of those still open."""
    stopped_at = p.ledger.stopped_at(name, session_id) if session_id else None
    settled: list[tuple[Turn, str]] = []
    still_open: list[tuple[int, float]] = []
    for i, turn in enumerate(reading.turns):
        last = i == len(reading.turns) - 1 and reading.at_eof
        # Quiet since the file or the turn last changed, whichever is older: a
        # transcript copied from elsewhere has a fresh mtime but old lines.
        last_change = min(mtime, turn.ended) if turn.ended > 0 else mtime
        session_stop = stop if stop and (stop.harness, stop.session_id) == (name, turn.session_id) else None
        named = bool(session_stop and session_stop.turn_id == turn.turn_id and session_stop.last_message)
        verdict = settle(turn, last, stopped_at, p.now - last_change, stop_named=named)
        if last and session_stop is not None:
            verdict = _await_stop(p, turn, verdict, session_stop.last_message)
        if kept_out_until is not None and turn.offset < kept_out_until:
            verdict = "excluded"
        if verdict == "open":
            still_open.append((turn.offset, last_change + (QUIET if _answered(turn) else GIVE_UP)))
        else:
            settled.append((turn, verdict))
    return settled, still_open


def _await_stop(p: PassState, turn: Turn, verdict: str, last_message: str | None) -> str:
    """The last turn of the session a stop signal ended stays open until it shows the answer the
    harness ended with; the stop hook then reads the transcript again (run_pass)."""
    if verdict == "bank" and _shows(turn.result, last_message):
        return verdict
    p.report.stop_waiting = not turn.closed
    return verdict if turn.closed else "open"


def prepare(p: PassState, settled: list[tuple[Turn, str]], window: float, fallback_cwd: str,
            rendered: dict[int, tuple[Entry, str, tuple | None]] | None = None
            ) -> list[tuple[str, Turn, Entry | None]]:
    """What becomes of each finished turn, decided (and its entry rendered, unless the read-ahead did:
    `rendered`, (entry, note, columns) by id of the turn): ("excluded" | "drop" | "skipped" | "bank", turn,
    entry)."""
    prepared: list[tuple[str, Turn, Entry | None]] = []
    for turn, verdict in settled:
        if verdict == "excluded" or kept_out(p, turn.cwd or fallback_cwd):
            prepared.append(("excluded", turn, None))
            continue
        if turn.result or turn.actions:
            p.uses.append((turn, use.references(turn)))
        if verdict == "drop":
            prepared.append(("drop", turn, None))
            continue
        if turn.ended < window:
            p.report.before_window += 1
            p.older(turn.ended)
            continue  # before the backfill window: not ours to bank (a wider backfill reads it again)
        turn.cwd = turn.cwd or fallback_cwd
        made = rendered.get(id(turn)) if rendered else None
        _checkpoint(p, turn, turn.cwd, made[1] if made else None)
        # our own memory tools are not work: a turn that only looked memory up (or recorded a
        # learning, banked already as its own entry) is skipped like one with no tool call
        worked = any(not is_our_action(a.tool) for a in turn.actions)
        if not worked and len(turn.result.strip()) < SKIP_RESULT_CHARS and not turn.always_bank:
            prepared.append(("skipped", turn, None))
            continue
        if made and made[2] is not None:
            p.computed[id(made[0])] = (made[0], *made[2])
        prepared.append(("bank", turn, made[0] if made else bank.render(turn, p.memo)))
    return prepared


def _checkpoint(p: PassState, turn: Turn, cwd: str, note_text: str | None = None) -> None:
    update = StateUpdate(at=turn.ended, kind="turn", note=note(turn, p.memo) if note_text is None else note_text)
    note_states(p, turn.harness, turn.session_id, cwd, [update])


def note_states(p: PassState, harness: str, session_id: str, cwd: str, updates: list[StateUpdate]) -> None:
    """Updates for a session's state file, written when the pass finishes (`finish.finish_projects`)."""
    key = (harness, session_id)
    known_cwd, pending = p.sessions.get(key, (cwd, []))
    p.sessions[key] = (cwd or known_cwd, pending + updates)


def note(turn: Turn, memo: Memo | None) -> str:
    """A settled turn's line in its session's state (`state.py`): its title, redacted before it is cut."""
    return bank.make_title((redact if memo is None else memo.of(redact))(turn.title or turn.prompt))


def columns(entry: Entry, detect: bool) -> tuple[tuple[str, str, str, str], tuple[str, str, str], bool | None] | None:
    """What the index and the detector compute from an entry: the texts the index reads, their
    `index.computed_columns`, and `detect.worth_a_look` (with `detect`); None when they are not known before
    the index refresh parses the entry."""
    if entry.meta is None or entry.sections is None:
        return None  # its text is parsed at refresh: what it reads as is not known here
    try:
        from ..recall import index
    except ImportError:
        return None
    inputs = (str(entry.meta["title"]), entry.sections["prompt"], entry.sections["actions"], entry.sections["result"])
    try:
        if detect:
            from ..control.detect import worth_a_look

            stated = worth_a_look(inputs[0], inputs[1], inputs[3])
        else:
            stated = None
        return inputs, index.computed_columns(*inputs), stated
    except Exception:  # noqa: BLE001 - the refresh computes them again
        return None


def _shows(result: str, last_message: str | None) -> bool:
    """Whether the answer we read is the one the harness says it ended with. The readers take our
    memory out of an answer that quotes it (`strip_injected`); the harness's word keeps it."""
    if not last_message:
        return True
    want = " ".join(strip_injected(last_message).split())[:200]
    return want in " ".join(result.split())


def _answered(turn: Turn) -> bool:
    """An answer with no tool call still waiting: what the quiet rule settles after QUIET (SPEC §4)."""
    return bool(turn.result.strip()) and turn.pending_tools == 0 and not turn.needs_end_marker
