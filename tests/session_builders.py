"""Synthetic long sessions for the replay estimate, one writer per harness, with and without compaction.

Each writer produces what the real CLI writes on the active chain (ids and parent links, tool calls and
results, usage figures on assistant messages) and keeps `truth`: the context size the "model" reported for
each request. The reported size counts text at `CHARS_PER_TOKEN` (code tokenises denser than chars/4) on
top of a fixed system prompt, so the estimate's chars/4 extrapolation is checked against a different
tokeniser, not against itself.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_TOKENS = 14_000
CHARS_PER_TOKEN = 3.6


def tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN)


def filler(n: int, seed: int) -> str:
    """`n` characters of code-like words (deterministic)."""
    words = ["def", "return", "assert", "value", "config", "handler", "session", "import", "index", "query"]
    out, size = [], 0
    while size < n:
        word = words[(seed + len(out) * 7) % len(words)]
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n]


@dataclass
class Synthetic:
    path: Path
    context: int = 0  # the size of the context right now (what the next request would send)
    reported: list[int] = field(default_factory=list)  # every usage figure written, in order
    lines: list[dict] = field(default_factory=list)

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return self.path


def _id() -> str:
    return str(uuidlib.uuid4())


class ClaudeWriter(Synthetic):
    def __init__(self, path: Path, cwd: str):
        super().__init__(path, SYSTEM_TOKENS)
        self.cwd = cwd
        self.parent: str | None = None

    def _add(self, **fields) -> dict:
        fields.setdefault("uuid", _id())
        fields.update(parentUuid=self.parent, cwd=self.cwd, sessionId=self.path.stem, isSidechain=False,
                      timestamp="2026-11-30T10:00:00.000Z")
        self.parent = fields["uuid"]
        self.lines.append(fields)
        return fields

    def turn(self, n: int, output_chars: int) -> None:
        prompt = f"Step {n}: refactor the handler {filler(200, n)}"
        self._add(type="user", message={"role": "user", "content": prompt})
        self.context += tokens(prompt)
        call = {"command": f"pytest -k case{n}"}
        out = filler(output_chars, n)
        used = self.context + 30
        self._add(type="assistant", message={"id": f"msg_{n}a", "role": "assistant", "model": "claude-x", "content": [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": call}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 500, "cache_read_input_tokens": self.context - 503,
                      "output_tokens": 30}})
        self.reported.append(used)
        self.context = used
        self._add(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": out}]}, toolUseResult={"stdout": out})
        self.context += tokens(out)
        answer = f"Done with step {n}. {filler(300, n + 1)}"
        used = self.context + tokens(answer)
        self._add(type="assistant", message={"id": f"msg_{n}b", "role": "assistant", "model": "claude-x",
                                             "content": [{"type": "text", "text": answer}],
                                             "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0,
                                                       "cache_read_input_tokens": self.context - 5,
                                                       "output_tokens": tokens(answer)}})
        self.reported.append(used)
        self.context = used

    def compact(self, post_tokens: int) -> None:
        self.parent = None
        self._add(type="system", subtype="compact_boundary", content="Conversation compacted",
                  compactMetadata={"trigger": "auto", "preTokens": self.context, "postTokens": post_tokens})
        summary = "This session is being continued from a previous conversation. " + filler(2000, 3)
        self._add(type="user", isCompactSummary=True, message={"role": "user", "content": summary})
        self.context = post_tokens + tokens(summary)


class CodexWriter(Synthetic):
    def __init__(self, path: Path, cwd: str, session_id: str):
        super().__init__(path, SYSTEM_TOKENS)
        self.lines.append({"timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta",
                           "payload": {"id": session_id, "cwd": cwd, "source": "cli", "cli_version": "0.171.0"}})

    def _item(self, payload: dict) -> None:
        self.lines.append({"timestamp": "2026-11-30T10:00:01.000Z", "type": "response_item", "payload": payload})

    def _usage(self, used: int) -> None:
        self.lines.append({"timestamp": "2026-11-30T10:00:01.000Z", "type": "event_msg", "payload": {
            "type": "token_count", "info": {"total_token_usage": {"total_tokens": used * 9},
                                            "last_token_usage": {"input_tokens": used - 40, "output_tokens": 40,
                                                                 "total_tokens": used}}}})
        self.reported.append(used)
        self.context = used

    def turn(self, n: int, output_chars: int) -> None:
        self.lines.append({"timestamp": "2026-11-30T10:00:01.000Z", "type": "event_msg",
                           "payload": {"type": "task_started", "turn_id": f"turn-{n}"}})
        prompt = f"Step {n}: fix the parser {filler(200, n)}"
        self._item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
        self.context += tokens(prompt)
        self._item({"type": "function_call", "name": "exec_command", "call_id": f"call_{n}",
                    "arguments": json.dumps({"cmd": f"cargo test case{n}"})})
        self._usage(self.context + 40)
        out = filler(output_chars, n)
        self._item({"type": "function_call_output", "call_id": f"call_{n}", "output": out})
        self.context += tokens(out)
        answer = f"Fixed step {n}. {filler(300, n)}"
        self._item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]})
        self._usage(self.context + tokens(answer))
        self.lines.append({"timestamp": "2026-11-30T10:00:02.000Z", "type": "event_msg",
                           "payload": {"type": "task_complete", "turn_id": f"turn-{n}", "last_agent_message": answer}})

    def compact(self) -> None:
        summary = "Another language model started to solve this problem. " + filler(3000, 5)
        history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Step 1: fix"}]},
                   {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}]
        self.lines.append({"timestamp": "2026-11-30T10:00:03.000Z", "type": "compacted",
                           "payload": {"message": "", "replacement_history": history}})
        self.context = SYSTEM_TOKENS + tokens(summary) + 5


class PiWriter(Synthetic):
    """pi and omp (v3 entries with ids); omp adds `tokensAfter` to a compaction."""

    def __init__(self, path: Path, cwd: str, session_id: str, omp: bool = False):
        super().__init__(path, SYSTEM_TOKENS)
        self.omp = omp
        self.parent: str | None = None
        if omp:
            self.lines.append({"type": "title", "v": 1, "title": "", "pad": " " * 40})
        self.lines.append({"type": "session", "version": 3, "id": session_id, "cwd": cwd,
                           "timestamp": "2026-11-30T10:00:00.000Z"})

    def _entry(self, **fields) -> dict:
        fields.update(id=_id()[:8], parentId=self.parent, timestamp="2026-11-30T10:00:01.000Z")
        self.parent = fields["id"]
        self.lines.append(fields)
        return fields

    def _assistant(self, content: list, used: int) -> None:
        self._entry(type="message", message={"role": "assistant", "content": content, "stopReason": "toolUse",
                                             "usage": {"input": 20, "output": 40, "cacheRead": used - 60,
                                                       "cacheWrite": 0, "totalTokens": used}})
        self.reported.append(used)
        self.context = used

    def turn(self, n: int, output_chars: int) -> dict:
        prompt = f"Step {n}: wire the config {filler(200, n)}"
        user = self._entry(type="message", message={"role": "user", "content": [{"type": "text", "text": prompt}]})
        self.context += tokens(prompt)
        self._assistant([{"type": "toolCall", "id": f"call_{n}", "name": "bash",
                          "arguments": {"command": f"npm test -- case{n}"}}], self.context + 40)
        out = filler(output_chars, n)
        self._entry(type="message", message={"role": "toolResult", "toolCallId": f"call_{n}", "toolName": "bash",
                                             "content": [{"type": "text", "text": out}], "isError": False})
        self.context += tokens(out)
        answer = f"Wired step {n}. {filler(300, n)}"
        self._assistant([{"type": "text", "text": answer}], self.context + tokens(answer))
        return user

    def compact(self, first_kept: str) -> None:
        summary = "## Goal\nFinish the config work.\n" + filler(2500, 9)
        fields = {"type": "compaction", "summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": self.context}
        kept = self._kept_tokens(first_kept)
        if self.omp:
            fields["tokensAfter"] = SYSTEM_TOKENS + tokens(summary) + kept
        self._entry(**fields)
        self.context = SYSTEM_TOKENS + tokens(summary) + kept

    def _kept_tokens(self, first_kept: str) -> int:
        ids = [line.get("id") for line in self.lines]
        kept = self.lines[ids.index(first_kept):]
        return sum(tokens(json.dumps(line.get("message", {}).get("content", ""))) for line in kept)

    def branch_from(self, entry: dict) -> None:
        """`/tree`: the next entry hangs off an earlier one; what came after it is off the active chain."""
        self.parent = entry["parentId"]
