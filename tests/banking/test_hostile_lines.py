"""Lines a harness really writes, or an attacker plants, cost no turn and hold no pass hostage:
a lone UTF-16 surrogate escape (Claude Code writes one when it cuts an emoji in half,
anthropics/claude-code#3277) becomes U+FFFD and the turn is banked."""

from __future__ import annotations

from pathlib import Path

from harnesslink_core.banking.autobank import run_pass
from harnesslink_core.harnesses.base import decode
from harnesslink_core.store.entries import read_entry
from tests.claude_builder import ClaudeSession

LONG = "The answer explains the whole change in detail, with the reasons for each step. " * 4


def test_a_lone_surrogate_escape_is_repaired_not_dropped() -> None:
    assert decode(b'{"a": "rocket \\ud83d launch", "b": "\\ud83d\\ude80", "c": "\\udc00"}') == {
        "a": "rocket \ufffd launch", "b": "\U0001f680", "c": "\ufffd"}
    assert decode(b'{"a": "fine"}') == {"a": "fine"}
    assert decode(b"not json \\ud83d") is None


def test_a_turn_whose_lines_hold_lone_surrogates_is_banked_whole(locs, isolated_home: Path) -> None:
    s = ClaudeSession(isolated_home)
    s.turn("Set up the release checklist for the mobile app", LONG)
    s.turn("Add the LONE rocket to the release banner", LONG + " banner done")
    s.turn("Now translate the banner strings", "Translated the banner strings LONE into three languages. " + LONG)
    s.turn("Bump the version to 2.4.1", LONG + " bumped")
    path = s.flush()
    path.write_text(path.read_text().replace("LONE", "\\ud83d"))
    report = run_pass(locs)
    assert report.banked == 4 and report.errors == 0
    entries = [read_entry(p) for p in sorted((locs.memories / "--work-app--" / "bank").glob("*.md"))]
    prompts = {e.prompt: e for e in entries}
    assert "Add the \ufffd rocket to the release banner" in prompts
    translated = prompts["Now translate the banner strings"]
    assert translated.result.startswith("Translated the banner strings \ufffd into three languages.")
