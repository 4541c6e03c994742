"""What pi and omp share: the session folder layout and one incremental session reader.

omp (oh-my-pi) is a fork of pi and writes the same JSONL session format with a few
additions; one reader handles both, and each harness module only says where its
files live. The format (pi `docs/session.md`, omp `docs/session.md`):

- omp's line 1 may be a fixed 256-byte `{"type":"title",...}` slot; then the
  `{"type":"session", id, cwd, timestamp, version?, parentSession? | branchedFrom?}`
  header; then entries `{type, id, parentId, timestamp, ...}` (v1 files have no
  id/parentId). Conversation lines are `{"type":"message","message":{role,...}}`.
- A turn starts at a genuine user message and runs until the next one. Lines
  that are never prompts: `custom_message` entries (ours and other extensions'),
  compaction and branch summaries, `bashExecution` (the user's `!` commands),
  `developer`/`custom`/`hookMessage`/`fileMention` roles, omp user messages marked
  `synthetic` or attributed to the agent, and our own injected memory.
- `/tree` branches stay in one file (a new user entry hangs off an earlier one and
  is appended at the end); the file is read in order, so every branch's turns are
  reported once each.

Choices worth knowing:

- **Turn ids** are derived from the user message's own timestamp and text, never
  from the entry `id`: pi rewrites a v1 file with fresh random ids the first time
  it opens it (`migrateToCurrentVersion` + `_rewriteFile`), and an id-based key
  would bank every old turn a second time.
- **Forks** (`/fork`, `createBranchedSession`, `forkFrom`, omp `SessionManager.fork`)
  write a new file whose header carries `parentSession` (v1: `branchedFrom`) and a
  fresh timestamp, then copy the parent's entries verbatim, ids and timestamps
  included. So in a file with lineage, an entry stamped before its header was
  copied from the parent: turns and states that start there are not reported
  (the parent file banks them). Entries appended after the fork are newer than the
  header and read normally. As a second guard, `Turn.dedupe_id` is the turn id,
  which a copy shares with its original.
- An assistant reply that only says `stopReason: "aborted"`/`"error"` leaves its
  turn as it is (`aborted=False`): pi records nothing more explicit, and the
  short-turn skip rule drops such turns when they did nothing.
- omp `steering` messages (typed while the agent works) join the running turn's
  prompt instead of starting a turn: the agent run they steer is still one run.
- A file inside a session's artifacts folder (omp subagents,
  `<session>/<agent>.jsonl`) or holding a `session_init` entry is a subagent
  transcript: `Reading.excluded = "subagent"`, no turns.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ...clock import parse_iso
from ...model import Action, Reading, SessionInfo, StateUpdate, Turn
from ..base import LongLine, blake2b, decode, iter_lines, normalise_tool, our_tool, scan_files, strip_injected, text_of

# Folders that sit beside the per-cwd session folders or inside them and never
# hold top-level sessions (nicobailon/pi-subagents).
_NOT_SESSION_DIRS = {"subagent-artifacts"}

TODO_TOOLS = {"todo", "todo_write", "todowrite"}
TODO_MARKS = {"completed": "x", "done": "x", "in_progress": "~", "blocked": "!", "abandoned": "-", "pending": " "}
_NEVER_PROMPT_ROLES = {"assistant", "toolResult"}


def session_files(sessions_root: Path) -> Iterator[os.DirEntry[str]]:
    """`*.jsonl` files directly inside each `<sessions_root>/<dir>/`, sorted.

    Subagent transcripts live one level deeper (`<dir>/<session>/...`) and are
    not listed.
    """
    yield from scan_files(
        sessions_root, lambda name: name.endswith(".jsonl"), 1,
        skip_dir=lambda name: name in _NOT_SESSION_DIRS or name.startswith("run-"),
    )


def is_subagent_path(path: Path) -> bool:
    """Whether the file lies below a session's artifacts folder (`<session>.jsonl` beside the folder).

    omp subagents write `<session>/<agent>.jsonl` (nested: `<session>/<agent>/<agent>.<child>.jsonl`);
    pi-subagents `<session>/<runId>/run-<n>/...`.
    """
    for folder in list(path.parents)[:4]:
        if folder.parent != folder and (folder.parent / (folder.name + ".jsonl")).is_file():
            return True
    return False


@dataclass
class _Building:
    turn: Turn
    copied: bool  # copied from the parent session by a fork: never reported
    calls: dict[str, tuple[str, Any]] = field(default_factory=dict)  # waiting tool calls: id -> (name, input)


def read_session(harness: str, path: Path, start: int, carry: dict[str, Any], budget: int,
                 long_line: LongLine | None = None) -> Reading:
    """Decode complete lines of a pi/omp session file from `start` (see the module docstring)."""
    carry = dict(carry)
    if "subagent" not in carry:
        carry["subagent"] = is_subagent_path(path)
    reader = _Reader(harness, path, carry)
    with open(path, "rb") as f:
        if start > 0 and "session_id" not in carry:
            _learn_head(f, carry)
        end = start
        at_eof = True
        for offset, line_end, raw in iter_lines(f, start, long_line):
            entry = decode(raw)
            if entry is None:
                if raw.strip() or line_end - offset > 1:
                    reader.bad_lines += 1
                end = line_end
                continue
            if reader.starts_turn(entry) and offset - start > budget:
                at_eof = False
                reader.close_current()  # the prompt we stop before proves it is over
                break
            reader.take(offset, entry)
            end = line_end
    return reader.reading(end, at_eof)


def _learn_head(f: Any, carry: dict[str, Any]) -> None:
    """Read the header when a read starts mid-file without the session facts."""
    for index, (_, _, raw) in enumerate(iter_lines(f, 0)):
        entry = decode(raw)
        if entry is not None and entry.get("type") == "session":
            _learn_header(entry, carry)
            return
        if index >= 2:  # the header is line 1, or line 2 after omp's title slot
            return


def _learn_header(entry: dict[str, Any], carry: dict[str, Any]) -> None:
    if isinstance(entry.get("id"), str) and entry["id"]:
        carry["session_id"] = entry["id"]
    if isinstance(entry.get("cwd"), str):
        carry["cwd"] = entry["cwd"]
    carry["version"] = entry.get("version") if isinstance(entry.get("version"), int) else 1
    parent = entry.get("parentSession") or entry.get("branchedFrom")
    if isinstance(parent, str) and parent:
        carry["parent"] = parent
        carry["forked_at"] = parse_iso(entry.get("timestamp"))


class _Reader:
    def __init__(self, harness: str, path: Path, carry: dict[str, Any]) -> None:
        self.harness = harness
        self.path = path
        self.carry = carry
        self.turns: list[Turn] = []
        self.states: list[StateUpdate] = []
        self.current: _Building | None = None
        self.bad_lines = 0
        self.last_time: float | None = None

    # -- what a line is -------------------------------------------------

    def starts_turn(self, entry: dict[str, Any]) -> bool:
        message = _message(entry)
        if message is None or _prompt_text(message) is None:
            return False
        return not (message.get("steering") and self.current is not None)

    def _copied(self, when: float | None) -> bool:
        forked_at = self.carry.get("forked_at")
        return isinstance(forked_at, (int, float)) and when is not None and when < forked_at

    # -- taking lines -----------------------------------------------------

    def take(self, offset: int, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind == "title":
            return
        if kind == "session":
            _learn_header(entry, self.carry)
            return
        when = _entry_time(entry)
        if when is not None:
            self.last_time = when
        if kind == "session_init":
            self.carry["subagent"] = True
            return
        if kind == "message":
            message = _message(entry)
            if message is not None:
                self._take_message(offset, entry, message, when)
            return
        copied = self._copied(when) if when is not None else self.current is not None and self.current.copied
        if copied:
            return
        state = _state_of(entry, when if when is not None else self._fallback_time())
        if state is not None:
            self.states.append(state)

    def _take_message(self, offset: int, entry: dict[str, Any], message: dict[str, Any], when: float | None) -> None:
        role = message.get("role")
        if role == "user":
            prompt = _prompt_text(message)
            if prompt is None:
                return
            if message.get("steering") and self.current is not None:
                self.current.turn.prompt = f"{self.current.turn.prompt}\n\n{prompt}".strip()
                return
            self._start(offset, entry, message, prompt, when)
            return
        building = self.current
        if building is None or role not in _NEVER_PROMPT_ROLES:
            return  # bashExecution, custom, developer, ... belong to no turn's work
        if when is not None:
            building.turn.ended = max(building.turn.ended, when)
        if role == "assistant":
            _take_assistant(building, message)
        else:
            self._take_tool_result(building, message, when)

    def _start(self, offset: int, entry: dict[str, Any], message: dict[str, Any], prompt: str, when: float | None) -> None:
        self.close_current()
        started = when if when is not None else self._fallback_time()
        turn_id = _turn_id(entry, message)
        turn = Turn(
            harness=self.harness,
            session_id=self.session_id(),
            turn_id=turn_id,
            cwd=self.cwd(),
            prompt=prompt,
            offset=offset,
            started=started,
            ended=started,
            dedupe_id=turn_id,  # a fork's copy of this turn keeps the message time and text
        )
        self.current = _Building(turn=turn, copied=self._copied(when))

    def _take_tool_result(self, building: _Building, message: dict[str, Any], when: float | None) -> None:
        call_id = message.get("toolCallId")
        name, call_input = message.get("toolName"), None
        if isinstance(call_id, str) and call_id in building.calls:
            name, call_input = building.calls.pop(call_id)
        if building.copied or str(name or "").lower() not in TODO_TOOLS or message.get("isError"):
            return
        todos = _todos_of(message.get("details"))
        if todos is None:
            todos = _todos_of(call_input)
        if todos is not None:
            at = when if when is not None else building.turn.ended
            self.states.append(StateUpdate(at=at, kind="todos", todos=todos))

    def close_current(self) -> None:
        building = self.current
        self.current = None
        if building is None or building.copied:
            return
        building.turn.closed = True
        building.turn.pending_tools = len(building.calls)
        self.turns.append(building.turn)

    # -- the result -------------------------------------------------------

    def session_id(self) -> str:
        value = self.carry.get("session_id")
        if isinstance(value, str) and value:
            return value
        stem = self.path.stem  # `<timestamp>_<uuid>.jsonl`
        return stem.split("_", 1)[1] if "_" in stem else stem

    def cwd(self) -> str:
        value = self.carry.get("cwd")
        return value if isinstance(value, str) else ""

    def _fallback_time(self) -> float:
        if self.last_time is not None:
            return self.last_time
        forked_at = self.carry.get("forked_at")
        if isinstance(forked_at, (int, float)):
            return float(forked_at)
        try:
            return self.path.stat().st_mtime
        except OSError:
            return 0.0

    def reading(self, end: int, at_eof: bool) -> Reading:
        if self.current is not None and not self.current.copied:
            self.current.turn.pending_tools = len(self.current.calls)
            self.turns.append(self.current.turn)
        self.current = None
        session = SessionInfo(harness=self.harness, session_id=self.session_id(), cwd=self.cwd())
        if self.carry.get("subagent"):
            return Reading(
                turns=[], end=end, at_eof=at_eof, carry=self.carry, session=session,
                bad_lines=self.bad_lines, excluded="subagent",
            )
        return Reading(
            turns=self.turns, end=end, at_eof=at_eof, carry=self.carry, states=self.states,
            session=session, bad_lines=self.bad_lines,
        )


def _message(entry: dict[str, Any]) -> dict[str, Any] | None:
    if entry.get("type") != "message":
        return None
    message = entry.get("message")
    return message if isinstance(message, dict) else None


def _prompt_text(message: dict[str, Any]) -> str | None:
    """The user's text when this message is a genuine prompt, else None."""
    if message.get("role") != "user" or message.get("synthetic") is True:
        return None
    attribution = message.get("attribution")
    if attribution is not None and attribution != "user":
        return None
    content = message.get("content")
    text = strip_injected(text_of(content)).strip()
    if text:
        return text
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in content):
        return "[image]"
    return None


def _turn_id(entry: dict[str, Any], message: dict[str, Any]) -> str:
    """Stable across pi's v1 -> v3 rewrite: the message's own time and text, not the entry id."""
    stamp = message.get("timestamp")
    if not isinstance(stamp, (int, float)) or isinstance(stamp, bool):
        stamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else entry.get("id")
    text = text_of(message.get("content"))
    return blake2b(f"{stamp}\n{text}".encode("utf-8", "replace"), digest_size=8).hexdigest()


def _entry_time(entry: dict[str, Any]) -> float | None:
    when = parse_iso(entry.get("timestamp"))
    if when is None and isinstance(entry.get("message"), dict):
        when = parse_iso(entry["message"].get("timestamp"))
    return when


def _take_assistant(building: _Building, message: dict[str, Any]) -> None:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    before_calls: list[str] = []
    after_last_call: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "toolCall":
            name = block.get("name")
            arguments = block.get("arguments")
            building.turn.actions.append(_action(name, arguments))
            if isinstance(block.get("id"), str):
                building.calls[block["id"]] = (str(name or ""), arguments)
            before_calls.extend(after_last_call)
            after_last_call = []
        elif kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            after_last_call.append(block["text"])
    text = strip_injected("\n".join(after_last_call or before_calls)).strip()  # never our memory, quoted back
    if text:
        building.turn.result = text


def _action(name: object, arguments: Any) -> Action:
    """One tool call; ours (the extension's native tools, or omp's MCP device) as `harnesslink.<tool>`."""
    ours = our_tool(name, bare=True)
    if ours:
        return Action(ours, arguments)
    if name == "write" and isinstance(arguments, dict) and str(arguments.get("path", "")).startswith("xd://"):
        # omp's device tool: `write` to xd://mcp__harnesslink_memory_search with the JSON arguments as content
        ours = our_tool(arguments["path"][len("xd://"):], bare=True)
        if ours:
            try:
                return Action(ours, orjson.loads(str(arguments.get("content") or "{}")))
            except orjson.JSONDecodeError:
                return Action(ours, arguments.get("content"))
    return Action(tool=normalise_tool(name), input=arguments)


def _state_of(entry: dict[str, Any], when: float) -> StateUpdate | None:
    kind = entry.get("type")
    if kind == "compaction":
        summary = entry.get("shortSummary") or entry.get("summary")
        return StateUpdate(at=when, kind="compaction", note=_first_line(summary))
    if kind == "mode_change" and entry.get("mode") == "plan":
        data = given if isinstance(given := entry.get("data"), dict) else {}
        plan = data.get("planFile") or data.get("plan")
        return StateUpdate(at=when, kind="plan", plan=str(plan) if plan else None, note="plan mode")
    if kind == "custom" and entry.get("customType") == "user_todo_edit":
        todos = _todos_of(entry.get("data"))
        if todos is not None:
            return StateUpdate(at=when, kind="todos", todos=todos)
    return None


def _first_line(text: object, limit: int = 300) -> str | None:
    if not isinstance(text, str):
        return None
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:limit]
    return None


def _todos_of(value: object) -> list[tuple[str, str]] | None:
    """Todos from any shape omp's todo tools (or pi's example `todo` tool) left behind.

    Current omp: `{phases: [{name, tasks: [{content, status}]}]}`; older omp
    `todo_write`: `{todos: [{content, status}]}`; pi's example: `{todos: [{text, done}]}`.
    None when the value holds no list at all (an empty list is a cleared list).
    """
    if not isinstance(value, dict):
        return None
    phases = value.get("phases")
    if isinstance(phases, list):
        items = [
            task
            for phase in phases
            if isinstance(phase, dict) and isinstance(phase.get("tasks"), list)
            for task in phase["tasks"]
        ]
    elif isinstance(value.get("todos"), list):
        items = value["todos"]
    else:
        return None
    todos = []
    for item in items:
        if not isinstance(item, dict):
            continue
        text = next((item[k] for k in ("content", "text", "title") if isinstance(item.get(k), str)), "")
        if not text.strip():
            continue
        status = item.get("status")
        if isinstance(status, str):
            mark = TODO_MARKS.get(status, " ")
        else:
            mark = "x" if item.get("done") is True or item.get("completed") is True else " "
        todos.append((mark, text.strip()))
    return todos
