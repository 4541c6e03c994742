"""What a harness reader hands to the autobank pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Action:
    tool: str  # normalised: lower case, every shell tool is "bash"
    input: Any  # JSON-able


@dataclass
class Turn:
    """One user prompt plus everything the agent did until it handed control back.

    A reader reports every turn it sees, finished or not; the pass decides
    whether it is settled (see `autobank.settle`).
    """

    harness: str
    session_id: str
    turn_id: str  # stable across re-reads: the identity of the turn within its harness
    cwd: str
    prompt: str
    offset: int  # byte offset of the turn's first line: where a later read resumes
    started: float  # epoch seconds
    ended: float  # epoch seconds of the turn's last line
    actions: list[Action] = field(default_factory=list)
    result: str = ""
    pending_tools: int = 0  # tool calls still waiting for their result
    closed: bool = False  # something after it proves it is over (next prompt, end marker)
    aborted: bool = False  # the harness says it was abandoned: never banked
    needs_end_marker: bool = False  # only an explicit end marker settles it (Codex)
    always_bank: bool = False  # exempt from the short-turn skip (Antigravity)
    title: str | None = None  # a reader may know a better title than the prompt's first line
    # An identity shared by every copy of this turn when a resumed or forked session
    # repeats it in another transcript (Claude Code's prompt uuid); None if copies cannot occur.
    dedupe_id: str | None = None
    # Set only for an entry that is rewritten in place when its source changes (Antigravity's
    # one entry per conversation): a fingerprint of what the entry shows.
    revision: str | None = None

    @property
    def key(self) -> str:
        return f"{self.harness}:{self.session_id}:{self.turn_id}"


@dataclass
class StateUpdate:
    """Something a session's state file shows: todos, a plan or a checkpoint."""

    at: float
    kind: str  # "todos" | "plan" | "compaction" | "turn" (a finished turn, for checkpoints)
    todos: list[tuple[str, str]] | None = None  # (status mark, text)
    plan: str | None = None
    note: str | None = None


@dataclass
class SessionInfo:
    harness: str
    session_id: str
    cwd: str


@dataclass
class Reading:
    """What one incremental read of a transcript found."""

    turns: list[Turn]
    end: int  # offset after the last complete line consumed
    at_eof: bool  # False when the read stopped early for its byte budget
    carry: dict[str, Any]  # session facts to hand to the next read of this file
    states: list[StateUpdate] = field(default_factory=list)
    session: SessionInfo | None = None
    bad_lines: int = 0
    excluded: str | None = None  # why the whole file is not banked (subagent, review thread, ...)
