"""The command each harness runs, and how we recognise commands we wrote.

Our entries in other programs' settings are found by a signature, never by
position: the command calls `context-hook` and names the harness with
`--harness <id>`. PRIOR_SIGNATURES keep recognising the forms earlier versions
wrote, so an upgrade replaces them instead of adding a second copy.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact")

_SAFE_IN_DOUBLE_QUOTES = re.compile(r'^[^"$`\\!]*$')


def quote(path: Path | str) -> str:
    """The path quoted for `sh -c` (Claude Code) and `$SHELL -lc` (Codex); spaces are fine."""
    text = str(path)
    if _SAFE_IN_DOUBLE_QUOTES.match(text):
        return f'"{text}"'
    return shlex.quote(text)


def command(hook_exe: Path, event: str, harness: str) -> str:
    return f"{quote(hook_exe)} {event} --harness {harness}"


def _harness_flag(flag: str, harness: str) -> str:
    # the id must end there: `--harness pi` is not `--harness pi-dev`
    return rf"{flag}[ =]['\"]?{re.escape(harness)}(?![\w-])"


SIGNATURE = r"context-hook\S*\s.*{harness}"
PRIOR_SIGNATURES = (
    # the research notes' first sketch passed the agent as --agent
    r"context-hook\S*\s.*{agent}",
    # the per-event scripts in this repository's hooks/ folder, wired directly
    r"hooks/(?:session-start|user-prompt-submit|stop|pre-compact)\S*\s.*{harness}",
)


def is_ours(command_text: object, harness: str) -> bool:
    """Whether a hook command is one we wrote for `harness` (now or in an earlier version)."""
    if not isinstance(command_text, str):
        return False
    fills = {
        "harness": _harness_flag("--harness", harness),
        "agent": _harness_flag("--agent", harness),
    }
    return any(re.search(sig.format(**fills), command_text) for sig in (SIGNATURE, *PRIOR_SIGNATURES))
