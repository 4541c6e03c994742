"""Codex CLI: rollout files under `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`.

Two formats exist. Since Sept 2025 every line is an envelope
`{"timestamp", "type", "payload"}`; the first line is `session_meta`, a turn
opens with `event_msg.task_started{turn_id}` and ends with `task_complete` or
`turn_aborted`. Files written before task markers were persisted have none: a
turn then starts at each `event_msg.user_message` ("implicit" turns, settled by
the next prompt or by the quiet rule). The older pre-envelope format starts
with `{"id", "timestamp", "instructions"}` and holds bare response items; its
turns start at each real user message and, since such a file is never written
again, end at the next one or at the end of the file.

Recent releases (0.171.0, seen in tests/fixtures/generated/codex) persist no
`user_message` event: the prompt is then the turn's real user `message` item.

Forks. `session_meta.forked_from_id` names the parent thread. Codex releases up
to mid 2026 start a fork's file by copying the parent's rollout items verbatim
(`Session::record_initial_history`, `InitialHistory::Forked` ->
`persist_rollout_items`): the copied `task_started`/`task_complete` events keep
the PARENT's turn ids, while their envelope timestamps are rewritten to the
fork time. Newer releases write a `fork_reference` line
(`{rollout_path, nth_user_message}`) instead of, or ahead of, the copy; 0.171.0
wrote neither, only the fork's own turns (generated fixture). A copied
turn would get a different turn_key (`codex:<fork id>:<parent turn id>`), so
copies are skipped explicitly: turn and thread ids are UUIDv7, so a turn whose
id is older than the fork's own thread id was copied; for turns without a
UUIDv7 id, a turn starting within `FORK_COPY_WINDOW` of the fork's first line
is taken as a copy. Nothing copied (turns, todos) is reported. As a second
guard, a turn with a UUID turn id carries it as `dedupe_id`, which a copy shares.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ...clock import parse_iso
from ...model import Action, Reading, SessionInfo, StateUpdate, Turn
from ...paths import Locations
from ..base import (LongLine, decode, is_injected, iter_lines, loads, normalise_tool, our_tool, scan_files,
                   strip_injected, text_of)

NAME = "codex"

FORK_COPY_WINDOW = 2.0  # seconds: copied parent history is written in one burst at fork time
COMPACTION_DEDUP = 5.0  # `compacted` and `context_compacted` report the same compaction

TODO_MARKS = {"completed": "x", "in_progress": "~", "pending": " "}

# Context Codex (or a hook, or we) put into the conversation as user messages.
CONTEXT_PREFIXES = (
    "<environment_context",
    "<user_instructions",
    "# AGENTS.md instructions",
    "<hook_prompt",
    "<turn_aborted",
    "<user_shell_command",
    "<subagent_notification",
    "<permissions instructions",
    "<collaboration_mode",
    "<skill",
    "<INSTRUCTIONS>",
)
_WHOLE_TAG = re.compile(r"<([A-Za-z_][\w.-]*)(?:\s[^>]*)?>.*</\1>\s*\Z", re.S)
_ENV_CWD = re.compile(r"<cwd>(.*?)</cwd>", re.S)
_UUID7 = re.compile(r"([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

CALL_TYPES = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call",
              "tool_search_call", "image_generation_call"}
OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "tool_search_output"}


def home(locs: Locations) -> Path:
    return locs.env_path("CODEX_HOME", locs.home / ".codex")


def detect(locs: Locations) -> bool:
    return home(locs).is_dir() or shutil.which("codex", path=locs.env.get("PATH", "")) is not None


def _rollout_files(locs: Locations, suffix: str) -> Iterator[os.DirEntry[str]]:
    """`sessions/YYYY/MM/DD/rollout-*<suffix>`, then `archived_sessions/` (flat or dated)."""
    def wanted(name: str) -> bool:
        return name.startswith("rollout-") and name.endswith(suffix)

    for folder in ("sessions", "archived_sessions"):
        yield from scan_files(home(locs) / folder, wanted, None)


def iter_transcripts(locs: Locations) -> Iterator[os.DirEntry[str]]:
    """Every plain rollout file, live and archived."""
    yield from _rollout_files(locs, ".jsonl")


def count_unreadable(locs: Locations) -> int:
    """Compressed rollouts (`.jsonl.zst`): we have no zstd reader, `status` reports them."""
    return sum(1 for _ in _rollout_files(locs, ".jsonl.zst"))


def unreadable(locs: Locations) -> str | None:
    """What `harnesslink status` should say we could not read."""
    n = count_unreadable(locs)
    return f"{n} compressed rollouts (.jsonl.zst) are not read" if n else None


def read(path: Path, start: int, carry: dict[str, Any], budget: int,
         long_line: LongLine | None = None) -> Reading:
    facts = dict(carry)
    try:
        f = open(path, "rb")
    except OSError:
        return Reading(turns=[], end=start, at_eof=True, carry=facts)
    with f:
        if start > 0 and "session_id" not in facts:
            _learn_from_head(f, facts)
        return _RolloutReader(facts, start, budget).run(f, long_line)


def _learn_from_head(f: BinaryIO, facts: dict[str, Any]) -> None:
    """Session facts from the first line, for a read that resumes mid-file without them."""
    for _offset, _end, raw in iter_lines(f, 0):
        record = decode(raw)
        if record is not None:
            _learn_session(record, facts)
        return


def _learn_session(record: dict[str, Any], facts: dict[str, Any]) -> bool:
    """Take session facts from a session_meta (or legacy first) line; True if it was one."""
    ts = parse_iso(record.get("timestamp"))
    if record.get("type") == "session_meta":
        meta = record.get("payload")
        if not isinstance(meta, dict):
            return True
        if "session_id" in facts:
            return True  # a fork's copy of its parent's session_meta: not ours
        facts["session_id"] = _text(meta.get("id")) or _text(meta.get("session_id"))
        facts["cwd"] = _text(meta.get("cwd"))
        facts["started"] = ts or parse_iso(meta.get("timestamp"))
        reason = _excluded_reason(meta)
        if reason:
            facts["excluded"] = reason
        parent = _text(meta.get("forked_from_id"))
        if parent:
            facts["forked_from"] = parent
            facts["fork_ts"] = ts
        return True
    if "type" not in record and "payload" not in record and "id" in record and "session_id" not in facts:
        facts["session_id"] = _text(record.get("id"))
        facts["legacy"] = True
        facts["started"] = ts
        facts.setdefault("cwd", "")
        return True
    return False


def _excluded_reason(meta: dict[str, Any]) -> str | None:
    source = meta.get("source")
    if isinstance(source, dict) and "subagent" in source:
        kind = source["subagent"]
        if kind == "review":
            return "review thread"
        if kind == "compact":
            return "compaction thread"
        if isinstance(kind, dict) and kind:
            return f"subagent ({next(iter(kind))})"
        return f"subagent ({kind})" if isinstance(kind, str) and kind else "subagent"
    if meta.get("thread_source") == "subagent":
        return "subagent"
    return None


@dataclass
class _OpenTurn:
    turn: Turn
    explicit: bool
    copied: bool
    prompts: list[str] = field(default_factory=list)  # from event_msg.user_message
    user_items: list[str] = field(default_factory=list)  # from response_item messages
    waiting: dict[str, None] = field(default_factory=dict)  # call ids without output
    last_answer: str = ""
    final: str | None = None


class _RolloutReader:
    """One read of one rollout: feeds each complete line to the turn being built."""

    def __init__(self, facts: dict[str, Any], start: int, budget: int) -> None:
        self.facts = facts
        self.start = start
        self.budget = budget
        self.turns: list[Turn] = []
        self.states: list[StateUpdate] = []
        self.open: _OpenTurn | None = None
        self.bad_lines = 0
        self.last_ts: float | None = None
        self.last_compaction: float | None = None

    def run(self, f: BinaryIO, long_line: LongLine | None = None) -> Reading:
        end = self.start
        at_eof = True
        for offset, line_end, raw in iter_lines(f, self.start, long_line):
            over_budget = offset - self.start > self.budget
            if self.facts.get("excluded"):
                if over_budget:
                    at_eof = False
                    break
                end = line_end
                continue  # nothing in an excluded thread is banked: don't decode it
            record = decode(raw)
            if record is None:
                self.bad_lines += 1 if raw.strip() else 0
            else:
                if over_budget and self._starts_turn(record):
                    at_eof = False
                    if self.open is not None and not self.open.explicit:
                        self._finish(closed=True)  # the next prompt is there: this one is over
                    break
                self._line(offset, record)
            end = line_end
        if self.open is not None:
            legacy_done = at_eof and self.facts.get("legacy")
            self._finish(closed=bool(legacy_done))
        return self._reading(end, at_eof)

    def _reading(self, end: int, at_eof: bool) -> Reading:
        excluded = self.facts.get("excluded")
        session_id = self.facts.get("session_id")
        session = SessionInfo(NAME, session_id, self.facts.get("cwd") or "") if session_id else None
        return Reading(
            turns=[] if excluded else self.turns,
            end=end,
            at_eof=at_eof,
            carry=self.facts,
            states=[] if excluded else self.states,
            session=session,
            bad_lines=self.bad_lines,
            excluded=excluded,
        )

    # -- what starts a turn

    def _starts_turn(self, record: dict[str, Any]) -> bool:
        kind = record.get("type")
        payload = record.get("payload")
        if kind == "event_msg" and isinstance(payload, dict):
            event = payload.get("type")
            if event in ("task_started", "turn_started"):
                return True
            if event == "user_message":
                in_explicit_turn = self.open is not None and self.open.explicit
                return not in_explicit_turn and not _is_context(strip_injected(_text(payload.get("message"))))
            return False
        if self.facts.get("legacy") and "payload" not in record:
            return _is_user_prompt_item(record)
        return False

    # -- one decoded line

    def _line(self, offset: int, record: dict[str, Any]) -> None:
        ts = parse_iso(record.get("timestamp"))
        if ts is not None:
            self.last_ts = ts
        if not _learn_session(record, self.facts):
            self._content(offset, record)
        if self.open is not None and ts is not None and ts > self.open.turn.ended:
            self.open.turn.ended = ts

    def _content(self, offset: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        if "payload" not in record:
            if record.get("record_type") or not isinstance(kind, str):
                return  # legacy `{"record_type": "state"}` and the like
            if self.facts.get("legacy") and _is_user_prompt_item(record):
                self._begin(None, offset, explicit=False)
            self._item(record)
            return
        if not isinstance(payload, dict):
            return
        if kind == "event_msg":
            self._event(offset, payload)
        elif kind == "response_item":
            self._item(payload)
        elif kind == "turn_context":
            if self.open is not None and _text(payload.get("cwd")):
                self.open.turn.cwd = _text(payload.get("cwd"))
        elif kind == "compacted":
            self._compaction()

    def _event(self, offset: int, payload: dict[str, Any]) -> None:
        event = payload.get("type")
        current = self.open
        if event in ("task_started", "turn_started"):
            self._begin(_text(payload.get("turn_id")) or None, offset, explicit=True,
                        started=_number(payload.get("started_at")))
        elif event in ("task_complete", "turn_complete"):
            if current is not None and self._same_turn(payload):
                current.final = _text(payload.get("last_agent_message")) or None
                current.turn.ended = _number(payload.get("completed_at")) or self._now()
                self._finish(closed=True)
        elif event == "turn_aborted":
            if current is not None and self._same_turn(payload):
                current.turn.aborted = True
                current.turn.ended = _number(payload.get("completed_at")) or self._now()
                self._finish(closed=True)
        elif event == "user_message":
            text = strip_injected(_text(payload.get("message")))
            if _is_context(text):
                return
            if current is None or not current.explicit:
                self._begin(None, offset, explicit=False)
            if self.open is not None:
                self.open.prompts.append(text.strip())
        elif event == "agent_message":
            if current is not None and _text(payload.get("message")).strip():
                current.last_answer = _text(payload.get("message"))
        elif event == "context_compacted":
            self._compaction()

    def _same_turn(self, payload: dict[str, Any]) -> bool:
        assert self.open is not None
        turn_id = _text(payload.get("turn_id"))
        return not turn_id or not self.open.explicit or turn_id == self.open.turn.turn_id

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message" and item.get("role") == "user" and self.facts.get("legacy"):
            self._learn_cwd(text_of(item.get("content")))  # legacy files name the cwd only here
        current = self.open
        if current is None:
            return
        turn = current.turn
        if kind == "message":
            role = item.get("role")
            text = text_of(item.get("content"))
            if role == "assistant" and text.strip():
                current.last_answer = text
            elif role == "user" and not _is_context(strip_injected(text)):
                current.user_items.append(strip_injected(text).strip())
        elif kind in CALL_TYPES:
            action = _action(item)
            turn.actions.append(action)
            call_id = _text(item.get("call_id"))
            if call_id and kind in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
                current.waiting[call_id] = None
            if action.tool == "update_plan":
                self._plan(action.input)
        elif kind in OUTPUT_TYPES:
            current.waiting.pop(_text(item.get("call_id")), None)

    def _learn_cwd(self, text: str) -> None:
        if not text.lstrip().startswith("<environment_context"):
            return
        match = _ENV_CWD.search(text)
        if match and match.group(1).strip():
            self.facts["cwd"] = match.group(1).strip()
            if self.open is not None:
                self.open.turn.cwd = self.facts["cwd"]

    # -- turns

    def _begin(self, turn_id: str | None, offset: int, *, explicit: bool, started: float | None = None) -> None:
        if self.open is not None:
            # a new prompt proves an implicit turn is over; an explicit one only ends at its marker
            self._finish(closed=not self.open.explicit)
        ts = started or self._now()
        legacy = bool(self.facts.get("legacy"))
        turn = Turn(
            harness=NAME,
            session_id=self.facts.get("session_id") or "",
            turn_id=turn_id or f"at-{offset}",
            cwd=self.facts.get("cwd") or "",
            prompt="",
            offset=offset,
            started=ts,
            ended=ts,
            needs_end_marker=explicit,
            # a fork's copy keeps the parent's turn id: a second guard should a copy slip through
            dedupe_id=turn_id if turn_id and _UUID.fullmatch(turn_id.lower()) else None,
        )
        copied = not legacy and self._copied(turn_id, self.last_ts)
        self.open = _OpenTurn(turn=turn, explicit=explicit, copied=copied)

    def _copied(self, turn_id: str | None, ts: float | None) -> bool:
        """Whether a turn in a forked thread is a copy of the parent's history."""
        if not self.facts.get("forked_from"):
            return False
        own = _uuid7_ms(self.facts.get("session_id"))
        turn = _uuid7_ms(turn_id)
        if own is not None and turn is not None:
            return turn < own
        fork_ts = self.facts.get("fork_ts")
        return ts is not None and fork_ts is not None and ts <= fork_ts + FORK_COPY_WINDOW

    def _finish(self, *, closed: bool) -> None:
        current = self.open
        self.open = None
        if current is None or current.copied:
            return
        turn = current.turn
        turn.prompt = "\n\n".join(p for p in current.prompts if p) or "\n\n".join(
            p for p in current.user_items if p
        )
        turn.result = strip_injected(current.final or current.last_answer)  # never our memory, quoted back
        turn.pending_tools = len(current.waiting)
        turn.closed = closed
        self.turns.append(turn)

    # -- state updates

    def _plan(self, arguments: Any) -> None:
        if self.open is None or self.open.copied or not isinstance(arguments, dict):
            return
        at = self._now()
        steps = arguments.get("plan")
        if isinstance(steps, list):
            todos = [
                (TODO_MARKS.get(_text(step.get("status")), " "), _text(step.get("step")))
                for step in steps
                if isinstance(step, dict) and _text(step.get("step"))
            ]
            self.states.append(StateUpdate(at=at, kind="todos", todos=todos))
        explanation = _text(arguments.get("explanation")).strip()
        if explanation:
            self.states.append(StateUpdate(at=at, kind="plan", plan=explanation))

    def _compaction(self) -> None:
        if self.open is not None and self.open.copied:
            return
        at = self._now()
        if self.last_compaction is not None and abs(at - self.last_compaction) < COMPACTION_DEDUP:
            return
        self.last_compaction = at
        self.states.append(StateUpdate(at=at, kind="compaction"))

    def _now(self) -> float:
        return self.last_ts or self.facts.get("started") or 0.0


def _action(item: dict[str, Any]) -> Action:
    kind = item.get("type")
    if kind == "function_call":
        name = item.get("name")
        namespace = item.get("namespace")
        ours = our_tool(name, namespace=namespace) if namespace else None
        return Action(ours or normalise_tool(name), _arguments(item.get("arguments")))
    if kind == "custom_tool_call":
        return Action(normalise_tool(item.get("name")), item.get("input"))
    if kind == "local_shell_call":
        action = item.get("action")
        command = action.get("command") if isinstance(action, dict) else None
        return Action("bash", {"command": command})
    if kind == "tool_search_call":
        return Action("tool_search", _arguments(item.get("arguments")))
    name = str(kind).removesuffix("_call")
    return Action(normalise_tool(name), item.get("action") or {})


def _arguments(raw: Any) -> Any:
    """Function arguments are a JSON string; keep the raw string when it is not JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return loads(raw)
    except ValueError:
        return raw


def _is_context(text: str) -> bool:
    """Injected context (environment, AGENTS.md, hook prompts, our memory): never a prompt."""
    stripped = text.strip()
    if not stripped or is_injected(stripped) or stripped.startswith(CONTEXT_PREFIXES):
        return True
    return _WHOLE_TAG.match(stripped) is not None


def _is_user_prompt_item(item: dict[str, Any]) -> bool:
    if item.get("type") != "message" or item.get("role") != "user":
        return False
    return not _is_context(strip_injected(text_of(item.get("content"))))


def _uuid7_ms(value: Any) -> int | None:
    """The millisecond timestamp inside a UUIDv7 (Codex thread and turn ids)."""
    if not isinstance(value, str):
        return None
    match = _UUID7.fullmatch(value.strip().lower())
    return int(match.group(1) + match.group(2), 16) if match else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return parse_iso(value)
