"""State files: `state/<harness>--<sessionId>.md`, a session's latest todos, plan and checkpoints."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import clock
from ..atomic import atomic_write
from ..model import StateUpdate
from ..redact import redact
from ..safefile import may_make_folder, read_regular
from .bank import yaml_quote

CHECKPOINTS_KEPT = 10
PLAN_CAP = 8_000
SAME_TIME = 0.002  # seconds: an entry's ts keeps milliseconds, its turn's checkpoint the full time


def apply(state: dict[str, Any], updates: list[StateUpdate]) -> dict[str, Any]:
    """Fold updates into a session's state; applying the same update twice changes nothing.

    Texts are redacted as they are folded in: the state is kept in the ledger too."""
    state = dict(state)
    checkpoints = [tuple(c) for c in state.get("checkpoints", [])]
    for update in updates:
        if update.kind == "todos" and update.todos is not None:
            if update.at >= state.get("todos_at", 0.0):
                state["todos"] = [[mark, redact(text)] for mark, text in update.todos]
                state["todos_at"] = update.at
        elif update.kind == "plan" and update.plan:
            if update.at >= state.get("plan_at", 0.0):
                state["plan"] = redact(update.plan)[:PLAN_CAP]
                state["plan_at"] = update.at
        elif update.kind in ("compaction", "turn"):
            checkpoints.append((update.at, update.kind, redact(update.note or "")))
    unique = sorted(set(checkpoints))
    state["checkpoints"] = [list(c) for c in unique[-CHECKPOINTS_KEPT:]]
    return state


def drop_checkpoints(state: dict[str, Any], turn_times: list[float]) -> tuple[dict[str, Any], int]:
    """The state without the checkpoints of the turns that finished at these times (forgotten
    turns), and how many were dropped; the state itself when none were."""
    checkpoints = state.get("checkpoints") or []
    kept = [[at, kind, note] for at, kind, note in checkpoints
            if not (kind == "turn" and any(abs(float(at) - ended) < SAME_TIME for ended in turn_times))]
    if len(kept) == len(checkpoints):
        return state, 0
    return dict(state, checkpoints=kept), len(checkpoints) - len(kept)


def file_name(harness: str, session_id: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", session_id)[:120] or "session"
    return f"{harness}--{safe}.md"


def render(harness: str, session_id: str, cwd: str, state: dict[str, Any]) -> str:
    kinds = [k for k in ("todos", "plan", "checkpoints") if state.get(k)]
    times = [state.get("todos_at", 0.0), state.get("plan_at", 0.0)] + [c[0] for c in state.get("checkpoints", [])]
    updated = clock.iso(max(times)) if any(times) else clock.iso(0)
    lines = [
        "---",
        f"harness: {harness}",
        f"session_id: {yaml_quote(session_id)}",
        f"cwd: {yaml_quote(redact(cwd))}",
        f"updated: {yaml_quote(updated)}",
        "kinds:" + ("" if kinds else " []"),
        *[f"  - {k}" for k in kinds],
        "---",
        "",
    ]
    if state.get("todos"):
        lines += ["## Todos", ""] + [f"- [{mark}] {redact(text)}" for mark, text in state["todos"]] + [""]
    if state.get("plan"):
        lines += ["## Plan", "", redact(state["plan"].strip()), ""]
    if state.get("checkpoints"):
        lines += ["## Checkpoints", ""]
        for at, kind, note in state["checkpoints"]:
            label = "Compaction" if kind == "compaction" else "Turn finished"
            lines.append(f"- {clock.iso(at)} — {label}" + (f": {redact(note)}" if note and kind != "compaction" else ""))
        lines.append("")
    return "\n".join(lines)


def write(project_dir: Path, harness: str, session_id: str, cwd: str, state: dict[str, Any]) -> Path | None:
    """Rewrite the state file only when its content changes; never through a symlinked folder (it may lead
    out of the tree)."""
    if not may_make_folder(os.fspath(project_dir.parent), project_dir.name, "state"):
        return None
    path = project_dir / "state" / file_name(harness, session_id)
    text = render(harness, session_id, cwd, state)
    wanted = text.encode("utf-8")
    if read_regular(os.fspath(path), len(wanted) + 1) == wanted:
        return None
    atomic_write(path, text)
    return path
