from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from harnesslink_core.wiring.hook_command import command, is_ours, quote


def test_command_quotes_a_path_with_spaces_for_the_shell() -> None:
    text = command(Path("/home/me/my stuff/venv/bin/context-hook"), "stop", "codex")
    assert text == '"/home/me/my stuff/venv/bin/context-hook" stop --harness codex'
    assert shlex.split(text) == ["/home/me/my stuff/venv/bin/context-hook", "stop", "--harness", "codex"]


def test_quote_survives_shell_metacharacters(tmp_path: Path) -> None:
    odd = "/tmp/a $HOME `x` \"q\" 'y'\\z"
    printed = subprocess.run(["sh", "-c", f"printf %s {quote(odd)}"], capture_output=True, text=True).stdout
    assert printed == odd


def test_our_current_command_is_recognised_for_its_harness_only() -> None:
    text = command(Path("/x/context-hook"), "stop", "pi")
    assert is_ours(text, "pi")
    assert not is_ours(text, "omp")
    assert not is_ours(text.replace("--harness pi", "--harness pi-dev"), "pi")


def test_prior_forms_are_recognised() -> None:
    assert is_ours("/old/venv/bin/context-hook stop --agent codex", "codex")
    assert is_ours('"/repo/hooks/stop" --harness claude-code', "claude-code")


def test_other_peoples_commands_are_not_ours() -> None:
    for text in ("echo hello", "python3 ~/.x/hook.py --harness codex", "context-hook", None, 42, {"command": "x"}):
        assert not is_ours(text, "codex")
