"""Bank entries written straight into a memories tree, in the SPEC §3 format,
for the search, brief, match and hook tests (no pass needed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from harnesslink_core.clock import file_safe, iso, parse_iso
from harnesslink_core.paths import Locations, locations
from harnesslink_core.scope import project_slug

REPO = Path(__file__).resolve().parent.parent


def make_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESSLINK", "CLAUDE", "CODEX", "PI_"))}
    env["HOME"] = str(home)
    env["HARNESSLINK_HOME"] = str(home / ".superpi" / "agent")
    env["PYTHONPATH"] = str(REPO)
    return env


def make_locs(tmp_path: Path) -> Locations:
    return locations(make_env(tmp_path))


def write_entry(
    locs: Locations,
    cwd: str,
    *,
    title: str,
    prompt: str | None = None,
    actions: list[tuple[str, dict]] = (),  # type: ignore[assignment]
    result: str = "",
    ts: str = "2026-08-28T10:30:00.000Z",
    harness: str = "claude-code",
    session_id: str = "s-1",
    turn_id: str | None = None,
    legacy: bool = False,
) -> Path:
    slug = project_slug(cwd)
    bank = locs.memories / slug / "bank"
    bank.mkdir(parents=True, exist_ok=True)
    tags: list[str] = []
    for tool, _ in actions:
        if tool not in tags:
            tags.append(tool)
    front = [
        "---",
        f"id: {file_safe(ts)}",
        f"ts: {json.dumps(ts)}",
        f"title: {json.dumps(title)}",
    ]
    if tags:
        front.append("tags:")
        front += [f"  - {t}" for t in tags]
    else:
        front.append("tags: []")
    front.append(f"cwd: {json.dumps(cwd)}")
    front.append(f"session_id: {json.dumps(session_id)}")
    if legacy:
        front.append("source: superpi-autobank")
    else:
        key = f"{harness}:{session_id}:{turn_id or file_safe(ts)}"
        front += [f"harness: {harness}", f"turn_key: {json.dumps(key)}", f"source: autobank:{harness}"]
    front.append("---")
    body = ["", "## Prompt", "", prompt or title, "", "## Actions", ""]
    body += [f"- {tool}: {json.dumps(args, separators=(',', ':'))}" for tool, args in actions] or ["(none)"]
    body += ["", "## Result", "", result, ""]
    name = f"{file_safe(ts)}--{re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')[:60]}.md"
    path = bank / name
    path.write_text("\n".join(front + body), "utf-8")
    return path


def at(ts: str, seconds: float) -> str:
    value = parse_iso(ts)
    assert value is not None
    return iso(value + seconds)


def run_hook(env: dict[str, str], *args: str, stdin: str | bytes = "", timeout: float = 30) -> subprocess.CompletedProcess:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "harnesslink_core.hooks", *args],
        input=data, capture_output=True, env=env, timeout=timeout, cwd=env["HOME"],
    )
