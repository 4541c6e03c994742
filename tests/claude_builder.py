"""Write Claude Code transcripts line by line, in the shapes the real CLI writes."""

from __future__ import annotations

import json
import uuid as uuidlib
from datetime import datetime, timedelta, timezone
from pathlib import Path


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class ClaudeSession:
    def __init__(self, home: Path, cwd: str = "/work/app", session_id: str | None = None,
                 start: datetime | None = None):
        self.cwd = cwd
        self.session_id = session_id or str(uuidlib.uuid4())
        folder = home / ".claude" / "projects" / ("-" + cwd.strip("/").replace("/", "-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{self.session_id}.jsonl"
        self.clock = start or datetime.now(timezone.utc) - timedelta(hours=1)
        self.lines: list[str] = []
        self.n = 0

    def _tick(self) -> str:
        self.clock += timedelta(seconds=1)
        return iso(self.clock)

    def _line(self, **fields) -> str:
        self.n += 1
        fields.setdefault("uuid", f"{self.session_id[:8]}-{self.n:06d}-{uuidlib.uuid4().hex[:8]}")
        fields.update(sessionId=self.session_id, cwd=self.cwd, timestamp=self._tick(), isSidechain=False)
        line = json.dumps(fields, ensure_ascii=False) + "\n"
        self.lines.append(line)
        return line

    def prompt(self, text: str) -> str:
        return self._line(type="user", message={"role": "user", "content": text})

    def tool(self, name: str, tool_input: dict, output: str = "ok") -> str:
        tool_id = f"toolu_{uuidlib.uuid4().hex[:12]}"
        mid = f"msg_{uuidlib.uuid4().hex[:12]}"
        a = self._line(type="assistant", message={"id": mid, "role": "assistant", "content": [
            {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]})
        b = self._line(type="user", toolUseResult={"stdout": output}, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": output}]})
        return a + b

    def answer(self, text: str) -> str:
        return self._line(type="assistant", message={"id": f"msg_{uuidlib.uuid4().hex[:12]}", "role": "assistant",
                                                     "content": [{"type": "text", "text": text}]})

    def end_of_turn(self) -> str:
        return self._line(type="system", subtype="stop_hook_summary", hookCount=1, hookInfos=[], hookErrors=[],
                          preventedContinuation=False, stopReason="", hasOutput=False)

    def compaction(self, trigger: str = "auto") -> str:
        """What the CLI writes once it has compacted the conversation: the boundary, then the summary."""
        boundary = self._line(type="system", subtype="compact_boundary", content="Conversation compacted",
                              parentUuid=None, compactMetadata={"trigger": trigger, "preTokens": 150000})
        return boundary + self._line(type="user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={
            "role": "user", "content": "This session is being continued from a previous conversation."})

    def turn(self, prompt: str, answer: str, tools: list[tuple[str, dict]] = (), closed: bool = True) -> str:
        text = self.prompt(prompt)
        for name, tool_input in tools:
            text += self.tool(name, tool_input)
        text += self.answer(answer)
        if closed:
            text += self.end_of_turn()
        return text

    def flush(self) -> Path:
        with self.path.open("a", encoding="utf-8") as f:
            f.write("".join(self.lines))
        self.lines.clear()
        return self.path
