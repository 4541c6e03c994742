"""Google Antigravity: one entry per conversation, from the CLI's prompt log (research/pi-omp.md §4).

Neither product keeps a readable per-turn transcript we can bank turn by turn:
the IDE's `~/.gemini/antigravity/conversations/*.pb` are encrypted protobuf,
and the CLI's `conversations/*.db` hold protobuf blobs. What is readable is
`~/.gemini/antigravity-cli/history.jsonl`, one line per prompt typed into
`agy`: `{display, timestamp (ms), workspace, type?, conversationId?}`. So a
conversation becomes one aggregate, rewritten in place as it grows (SPEC §4):
first prompt, workspace, last activity, prompt count and the last prompts, plus
the step count of its `brain/<id>/.system_generated/logs/transcript*.jsonl`
and the first heading of `brain/<id>/task.md` as its title.

Lines that are not prompts are ignored: `type` "slash_command" (`/model`,
`/clear`, ...) and "shell" (shell-mode commands). Subagent (child)
conversations never appear in the prompt log, so none is banked.

`conversationId` is missing on the first prompt of a conversation: agy writes
that line before the id exists. Such a line waits (in `carry`) for the next
prompt in the same workspace: if that one opens a conversation we have not
seen, the waiting line is its first prompt. Otherwise - the next prompt belongs
to a known conversation, is itself without an id, or comes more than
PENDING_WINDOW later - the waiting prompt goes to a "loose prompts" group of
its workspace and UTC day (`loose-<day>-<workspace hash>`). A lone prompt stays
unbanked until some later prompt settles it that way.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ...clock import iso, parse_iso
from ...model import Reading, Turn
from ...paths import Locations
from ..base import LongLine, blake2b, decode, iter_lines, strip_injected

NAME = "antigravity"

NOT_PROMPTS = {"slash_command", "shell"}
PENDING_WINDOW = 12 * 3600.0  # a first prompt waits this long for its conversation's id
LAST_PROMPTS = 20
PROMPT_CAP = 8000  # characters kept of the first prompt
LIST_ITEM_CAP = 300  # characters shown of each prompt in the list
TRANSCRIPTS = ("transcript_full.jsonl", "transcript.jsonl")  # the untruncated one first


def home(locs: Locations) -> Path:
    return locs.home / ".gemini"


def cli_dir(locs: Locations) -> Path:
    return home(locs) / "antigravity-cli"


def ide_dir(locs: Locations) -> Path:
    return home(locs) / "antigravity"


def detect(locs: Locations) -> bool:
    path = locs.env.get("PATH")
    return (cli_dir(locs).is_dir() or ide_dir(locs).is_dir()
            or shutil.which("agy", path=path) is not None or shutil.which("antigravity", path=path) is not None)


def iter_transcripts(locs: Locations) -> Iterator[Path]:
    history = cli_dir(locs) / "history.jsonl"
    if history.is_file():
        yield history


def unreadable(locs: Locations) -> str | None:
    """What `harnesslink status` should say we cannot read, or None."""
    count = _count_files(ide_dir(locs) / "conversations", ".pb")
    if not count:
        return None
    noun = "conversation is" if count == 1 else "conversations are"
    return f"{count} IDE {noun} encrypted protobuf (~/.gemini/antigravity/conversations/*.pb): not read"


def _count_files(folder: Path, suffix: str) -> int:
    try:
        with os.scandir(folder) as entries:
            return sum(1 for e in entries if e.name.endswith(suffix) and e.is_file())
    except OSError:
        return 0


def read(path: Path, start: int, carry: dict[str, Any], budget: int,
         long_line: LongLine | None = None) -> Reading:
    convs: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (carry.get("conversations") or {}).items()
                                        if isinstance(v, dict)}
    pending: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (carry.get("pending") or {}).items()
                                          if isinstance(v, dict)}
    touched: list[str] = []
    bad = 0
    end = start
    at_eof = True

    def add(key: str, text: str, ts: float, workspace: str) -> None:
        conv = convs.get(key)
        if conv is None:
            conv = convs[key] = {"first_prompt": text[:PROMPT_CAP], "first_at": ts, "workspace": workspace,
                                 "last_at": ts, "count": 0, "prompts": []}
        if not conv.get("workspace"):
            conv["workspace"] = workspace
        conv["last_at"] = max(float(conv.get("last_at") or 0.0), ts)
        conv["count"] = int(conv.get("count") or 0) + 1
        conv["prompts"] = (list(conv.get("prompts") or []) + [_list_item(text)])[-LAST_PROMPTS:]
        if key not in touched:
            touched.append(key)

    def settle_loose(workspace: str) -> None:
        waiting = pending.pop(workspace, None)
        if waiting:
            add(_loose_key(workspace, waiting["at"]), waiting["text"], waiting["at"], workspace)

    with open(path, "rb") as f:
        for _offset, line_end, raw in iter_lines(f, start, long_line):
            if end > start and end - start > budget:
                at_eof = False
                break
            end = line_end
            obj = decode(raw)
            if obj is None:
                if raw.strip():
                    bad += 1
                continue
            prompt = _prompt(obj)
            if prompt is None:
                continue
            text, ts, workspace, conv_id = prompt
            for other in [w for w, p in pending.items() if ts - p["at"] > PENDING_WINDOW]:
                settle_loose(other)
            waiting = pending.get(workspace) if workspace else None
            if conv_id is None:
                if not workspace:
                    continue  # neither id nor workspace: nothing to group it by
                settle_loose(workspace)
                pending[workspace] = {"text": text, "at": ts}
                continue
            if waiting and conv_id not in convs:
                del pending[workspace]
                add(conv_id, waiting["text"], waiting["at"], workspace)
            elif waiting:
                settle_loose(workspace)
            add(conv_id, text, ts, workspace)

    brain = path.parent / "brain"
    turns = [_turn(key, convs[key], brain) for key in touched if convs[key].get("workspace")]
    turns.sort(key=lambda t: (t.started, t.session_id))
    new_carry = {"conversations": convs, "pending": pending}
    return Reading(turns=turns, end=end, at_eof=at_eof, carry=new_carry, bad_lines=bad)


def _prompt(obj: dict[str, Any]) -> tuple[str, float, str, str | None] | None:
    """(text, time, workspace, conversation id) of a prompt line, or None."""
    kind = obj.get("type")
    if isinstance(kind, str) and kind in NOT_PROMPTS:
        return None
    display = obj.get("display")
    ts = parse_iso(obj.get("timestamp"))
    if not isinstance(display, str) or ts is None:
        return None
    text = strip_injected(display).strip()
    if not text:
        return None
    conv_id = obj.get("conversationId")
    conv_id = conv_id.strip() if isinstance(conv_id, str) and conv_id.strip() else None
    if conv_id is not None and (conv_id.startswith("loose-") or "/" in conv_id or conv_id in (".", "..")):
        conv_id = None  # not an id we can trust as a key or a folder name
    return text, ts, _workspace(obj.get("workspace")), conv_id


def _workspace(value: object) -> str:
    if not isinstance(value, str):
        return ""
    value = value.strip()
    if value.startswith("file://"):
        value = unquote(urlparse(value).path)
    return value.rstrip("/") or value


def _loose_key(workspace: str, ts: float) -> str:
    day = iso(ts)[:10]
    digest = blake2b(workspace.encode("utf-8", "replace"), digest_size=4).hexdigest()
    return f"loose-{day}-{digest}"


def _list_item(text: str) -> str:
    line = " ".join(text.split())
    if len(line) > LIST_ITEM_CAP:
        line = line[:LIST_ITEM_CAP] + f"…[cut: {len(line) - LIST_ITEM_CAP} more characters]"
    return line


def _turn(key: str, conv: dict[str, Any], brain: Path) -> Turn:
    folder = None if key.startswith("loose-") else brain / key
    steps = _step_count(folder) if folder else None
    count = int(conv.get("count") or 0)
    last_at = float(conv.get("last_at") or 0.0)
    prompts = list(conv.get("prompts") or [])
    if steps is None:
        step_line = f"- Steps: {count} (prompts; no readable agent transcript)"
    else:
        step_line = f"- Steps: {steps} (agent transcript)"
    heading = f"Last {len(prompts)} of {count} prompts:" if count > len(prompts) else "Prompts:"
    result = "\n".join([step_line, f"- Prompts: {count}", f"- Last activity: {iso(last_at)}", "",
                        heading, *[f"- {p}" for p in prompts]])
    revision = blake2b(f"{steps}|{count}|{last_at}".encode(), digest_size=8).hexdigest()
    first_at = float(conv.get("first_at") or 0.0)
    return Turn(harness=NAME, session_id=key, turn_id=key, cwd=str(conv.get("workspace") or ""),
                prompt=str(conv.get("first_prompt") or ""), offset=0, started=first_at, ended=first_at,
                result=result, closed=True, always_bank=True,
                title=_title(folder) if folder else None, revision=revision)


def _step_count(folder: Path) -> int | None:
    """Lines of the conversation's agent transcript (one line per step), or None if there is none."""
    for name in TRANSCRIPTS:
        try:
            with open(folder / ".system_generated" / "logs" / name, "rb") as f:
                count = 0
                last = b""
                while chunk := f.read(1 << 20):
                    count += chunk.count(b"\n")
                    last = chunk
                return count + (1 if last and not last.endswith(b"\n") else 0)
        except OSError:
            continue
    return None


def _title(folder: Path) -> str | None:
    """The first Markdown heading of the conversation's `task.md`."""
    try:
        with open(folder / "task.md", encoding="utf-8", errors="replace") as f:
            text = f.read(16000)
    except OSError:
        return None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            title = " ".join(stripped.lstrip("#").split())
            if title:
                return title[:200]
    return None
