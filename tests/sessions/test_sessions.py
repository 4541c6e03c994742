"""The replay estimate per harness (research/mcp-and-resume.md §5), session listing, and reading from the end."""

from __future__ import annotations

import json
import os
import shutil
import statistics
from pathlib import Path

import pytest

from harnesslink_core.sessions import base as sessions
from harnesslink_core.harnesses.claude_code import sessions as claude_code
from harnesslink_core.harnesses.codex import sessions as codex
from harnesslink_core.harnesses.pi_family import sessions as pi_family
from tests.conftest import FIXTURES
from tests.session_builders import ClaudeWriter, CodexWriter, PiWriter

GENERATED = Path(__file__).resolve().parents[1] / "fixtures" / "generated"
CWD = "/work/app"


# --- real fixtures: each prefix of a transcript predicts the size the next request reported ----------------------


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _claude_sent(r: dict) -> int:
    message = r.get("message") or {}
    if r.get("type") != "assistant" or r.get("isSidechain") or not isinstance(message.get("usage"), dict):
        return 0
    usage = message["usage"]
    return sum(usage.get(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def _codex_sent(r: dict) -> int:
    payload = r.get("payload") or {}
    if r.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
        return payload["info"]["last_token_usage"].get("input_tokens") or 0
    return 0


def _pi_sent(r: dict) -> int:
    message = r.get("message") or {}
    if r.get("type") == "message" and message.get("role") == "assistant" and isinstance(message.get("usage"), dict):
        usage = message["usage"]
        return (usage.get("input") or 0) + (usage.get("cacheRead") or 0) + (usage.get("cacheWrite") or 0)
    return 0


REAL = [
    # (harness module, figure the next request reported, fixture); left out: the cass pi fixture (its usage figures
    # are made up: 60 tokens for a request with a 600-character prompt) and the pi-mono compaction excerpt (lines
    # over 30 KB were dropped from it, so its figures cannot be predicted from what is left)
    *[(claude_code, _claude_sent, p) for p in sorted((FIXTURES / "claude-code").glob("*.jsonl"))
      if "agent" not in p.name],
    *[(codex, _codex_sent, p) for p in sorted((FIXTURES / "codex").glob("*.jsonl"))],
    *[(pi_family, _pi_sent, p) for p in sorted((FIXTURES / "pi-omp").glob("*large-session*.jsonl"))],
]


def _predictions(module, sent, path: Path) -> list[tuple[int, int]]:
    """(estimate from the lines before a request, the size that request reported), for every request."""
    records = _records(path)
    out = []
    for i, record in enumerate(records):
        actual = sent(record)
        if not actual:
            continue
        estimate = module.estimate_records(records[:i], True)
        if estimate.basis != "text":  # a first request has nothing to extrapolate from
            out.append((estimate.tokens, actual))
    return out


def test_the_real_fixtures_are_all_there() -> None:
    assert len(REAL) == 9, [p.name for _, _, p in REAL]


@pytest.mark.parametrize("module,sent,path", REAL, ids=[p.name[:50] for _, _, p in REAL])
def test_estimate_predicts_the_next_reported_context_on_real_transcripts(module, sent, path: Path) -> None:
    points = _predictions(module, sent, path)
    if not points:
        assert module is codex, "only the Codex fixtures without token_count events have no figure to check"
        return
    errors = [abs(estimate - actual) / actual for estimate, actual in points]
    within = sum(e <= 0.15 for e in errors) / len(errors)
    assert within >= 0.8, f"{within:.0%} within 15 %: {points}"
    assert statistics.median(errors) <= 0.02, points


def test_estimate_predicts_within_15_percent_across_all_real_transcripts() -> None:
    errors = [abs(e - a) / a for module, sent, path in REAL for e, a in _predictions(module, sent, path)]
    assert len(errors) >= 60
    assert sum(e <= 0.15 for e in errors) / len(errors) >= 0.9


@pytest.mark.parametrize("harness,pattern", [
    ("claude-code", "claude-code/projects/*/*.jsonl"),
    ("codex", "codex/sessions/*/*/*/*.jsonl"),
    ("pi", "pi/sessions/*/*.jsonl"),
    ("omp", "omp/sessions/*/*.jsonl"),
])
def test_generated_sessions_end_on_their_newest_usage_figure(harness: str, pattern: str) -> None:
    paths = sorted(GENERATED.glob(pattern))
    assert paths
    for path in paths:
        session = sessions.source(harness).describe(path)
        assert session is not None and session.cwd == "/home/tester/project"
        assert session.title.startswith(("Create the setup file", "In a fork"))
        # the fake model reports 50 input + 20 output tokens on every reply, and each session ends on a reply
        assert (session.replay.basis, session.replay_tokens) == ("usage", 70)


def test_a_compaction_on_a_real_pi_transcript_replays_less_than_before_it() -> None:
    records = _records(FIXTURES / "pi-omp" / "badlogic__pi-mono__before-compaction.excerpt.jsonl")
    at = next(i for i, r in enumerate(records) if r.get("type") == "compaction")
    estimate = pi_family.estimate_records(records[: at + 1], True)
    assert estimate.basis == "compaction"
    assert 0 < estimate.tokens < records[at]["tokensBefore"] / 10


def test_a_real_claude_compaction_counts_from_the_boundary() -> None:
    records = _records(FIXTURES / "claude-code" / "oneryalcin__fasthooks__sample_main_transcript.jsonl")
    at = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    just_after = claude_code.estimate_records(records[: at + 2], True)
    assert just_after.basis == "compaction"
    summary = records[at + 1]["message"]["content"]
    assert just_after.tokens >= len(summary if isinstance(summary, str) else json.dumps(summary)) // 5


# --- synthetic long sessions, with and without compaction -----------------------------------------------------------


def _claude(tmp_path: Path, turns: int, compact_after: int | None = None) -> ClaudeWriter:
    writer = ClaudeWriter(tmp_path / "c" / "11111111-2222-3333-4444-555555555555.jsonl", CWD)
    for n in range(turns):
        if n == compact_after:
            writer.compact(post_tokens=9_000)
        writer.turn(n, output_chars=6_000)
    return writer


def _codex(tmp_path: Path, turns: int, compact_after: int | None = None) -> CodexWriter:
    writer = CodexWriter(tmp_path / "x" / "rollout-2026-11-30T10-00-00-019c8bfe-0000-7000-8000-000000000001.jsonl",
                         CWD, "019c8bfe-0000-7000-8000-000000000001")
    for n in range(turns):
        if n == compact_after:
            writer.compact()
        writer.turn(n, output_chars=6_000)
    return writer


def _pi(tmp_path: Path, turns: int, compact_after: int | None = None, omp: bool = False) -> PiWriter:
    writer = PiWriter(tmp_path / "p" / "2026-11-30T10-00-00-000Z_019c8bfe-0000-7000-8000-000000000002.jsonl", CWD,
                      "019c8bfe-0000-7000-8000-000000000002", omp=omp)
    users = []
    for n in range(turns):
        if n == compact_after:
            writer.compact(first_kept=users[-2]["id"])
        users.append(writer.turn(n, output_chars=6_000))
    return writer


BUILDERS = {
    "claude-code": (_claude, claude_code),
    "codex": (_codex, codex),
    "pi": (lambda tmp, turns, compact_after=None: _pi(tmp, turns, compact_after), pi_family),
    "omp": (lambda tmp, turns, compact_after=None: _pi(tmp, turns, compact_after, omp=True), pi_family),
}


@pytest.mark.parametrize("harness", BUILDERS)
def test_a_long_session_without_compaction_is_offered_the_brief(harness: str, tmp_path: Path) -> None:
    build, module = BUILDERS[harness]
    writer = build(tmp_path, 40)
    path = writer.write()
    assert path.stat().st_size > 256 * 1024, "longer than the first tail window"
    estimate = module.estimate(path)
    assert estimate.basis == "usage"
    assert abs(estimate.tokens - writer.context) <= 0.15 * writer.context
    assert writer.context >= sessions.BRIEF_THRESHOLD and estimate.tokens >= sessions.BRIEF_THRESHOLD


@pytest.mark.parametrize("harness", BUILDERS)
def test_every_prefix_of_a_long_session_predicts_the_next_figure(harness: str, tmp_path: Path) -> None:
    build, module = BUILDERS[harness]
    writer = build(tmp_path, 12)
    records = writer.lines
    figures = iter(writer.reported)
    checked = 0
    for i, record in enumerate(records):
        if not _is_usage(harness, record):
            continue
        figure = next(figures)
        estimate = module.estimate_records(records[:i], True)
        if estimate.basis == "usage":
            # what the prefix predicts is what the request sends; the figure adds that reply's output
            assert abs(estimate.tokens - figure) <= 0.15 * figure, (i, estimate, figure)
            checked += 1
    assert checked >= 20


def _is_usage(harness: str, record: dict) -> bool:
    if harness == "codex":
        return record.get("payload", {}).get("type") == "token_count"
    return isinstance((record.get("message") or {}).get("usage"), dict)


@pytest.mark.parametrize("harness", BUILDERS)
def test_after_a_compaction_only_the_summary_and_what_follows_count(harness: str, tmp_path: Path) -> None:
    build, module = BUILDERS[harness]
    compacted = build(tmp_path / "a", 40, compact_after=36)
    whole = build(tmp_path / "b", 40)
    estimate = module.estimate(compacted.write())
    assert estimate.basis == "usage"
    assert abs(estimate.tokens - compacted.context) <= 0.15 * compacted.context
    assert estimate.tokens < module.estimate(whole.write()).tokens / 2


@pytest.mark.parametrize("harness", BUILDERS)
def test_right_after_a_compaction_the_estimate_comes_from_it(harness: str, tmp_path: Path) -> None:
    build, module = BUILDERS[harness]
    writer = build(tmp_path, 30, compact_after=29)
    cut = next(i for i, line in enumerate(writer.lines) if line.get("type") in ("compacted", "compaction")
               or line.get("subtype") == "compact_boundary")
    records = writer.lines[: cut + (2 if harness == "claude-code" else 1)]
    estimate = module.estimate_records(records, True)
    assert estimate.basis == "compaction"
    before = writer.reported[-3]
    assert estimate.tokens < before / 2
    if harness in ("claude-code", "omp"):  # a figure the harness wrote: postTokens, tokensAfter
        context_after = _context_after_compaction(writer, harness)
        assert abs(estimate.tokens - context_after) <= 0.15 * context_after


def _context_after_compaction(writer, harness: str) -> int:
    compaction = next(line for line in writer.lines if line.get("type") == "compaction"
                      or line.get("subtype") == "compact_boundary")
    if harness == "omp":
        return compaction["tokensAfter"]
    summary = writer.lines[writer.lines.index(compaction) + 1]["message"]["content"]
    return compaction["compactMetadata"]["postTokens"] + len(summary) // 4


def test_a_pi_branch_counts_only_the_active_chain(tmp_path: Path) -> None:
    writer = PiWriter(tmp_path / "s.jsonl", CWD, "019c8bfe-0000-7000-8000-000000000003")
    for n in range(5):
        writer.turn(n, output_chars=2_000)
    before = writer.context
    abandoned = writer.turn(5, output_chars=200_000)  # a huge detour, then /tree back to before it
    writer.branch_from(abandoned)
    writer.context = before
    writer.turn(6, output_chars=2_000)
    estimate = pi_family.estimate(writer.write())
    assert abs(estimate.tokens - writer.context) <= 0.15 * writer.context


# --- reading from the end -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("harness", BUILDERS)
def test_a_huge_transcript_is_estimated_from_its_end(harness: str, tmp_path: Path, monkeypatch) -> None:
    build, module = BUILDERS[harness]
    writer = build(tmp_path, 6)
    path = writer.write()
    old = path.read_text(encoding="utf-8")
    head, rest = old.split("\n", 1) if harness != "omp" else (old.split("\n", 2)[0] + "\n" + old.split("\n", 2)[1],
                                                              old.split("\n", 2)[2])
    # 40 MB of older history between the header and the last turns, which it must never read
    junk = json.dumps({"type": "progress", "data": "x" * (1024 * 1024 - 40)}) + "\n"
    path.write_text(head + "\n" + junk * 40 + rest, encoding="utf-8")
    windows: list[int] = []
    real = sessions.tail_records

    def spy(p, window):
        windows.append(window)
        return real(p, window)

    monkeypatch.setattr(sessions, "tail_records", spy)
    estimate = module.estimate(path)
    assert estimate.basis == "usage" and abs(estimate.tokens - writer.context) <= 0.15 * writer.context
    assert windows and max(windows) <= 1024 * 1024, windows


def test_the_window_grows_until_the_chain_reaches_a_figure(tmp_path: Path) -> None:
    writer = _claude(tmp_path, 3)
    huge = "y" * 3_000_000  # one tool result bigger than the first windows
    writer._add(type="user", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": huge}]})
    estimate = claude_code.estimate(writer.write())
    assert estimate.basis == "usage"
    assert estimate.tokens >= writer.context + len(huge) // 4


def test_a_partial_last_line_is_left_for_later(tmp_path: Path) -> None:
    writer = _codex(tmp_path, 3)
    path = writer.write()
    with path.open("a") as f:
        f.write('{"type":"response_item","payload":{"type":"message","content":"half')
    assert codex.estimate(path).tokens == writer.context


# --- the listing ----------------------------------------------------------------------------------------------------


def _install_fixture_world(home: Path, cwd: str) -> None:
    """The generated real-CLI sessions of all four harnesses, moved to `cwd`."""
    def place(src: Path, dst: Path) -> None:
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(src.read_text(encoding="utf-8").replace("/home/tester/project", cwd), encoding="utf-8")

    encoded = "".join(c if c.isalnum() else "-" for c in cwd)
    for path in sorted((GENERATED / "claude-code" / "projects").glob("*/*.jsonl")):
        place(path, home / ".claude" / "projects" / encoded / path.name)
    for path in sorted((GENERATED / "codex" / "sessions").rglob("*.jsonl")):
        place(path, home / ".codex" / "sessions" / path.relative_to(GENERATED / "codex" / "sessions"))
    for harness, folder in (("pi", home / ".pi" / "agent" / "sessions"), ("omp", home / ".omp" / "agent" / "sessions")):
        for path in sorted((GENERATED / harness / "sessions").glob("*/*.jsonl")):
            place(path, folder / "--work-app--" / path.name)


def test_listing_finds_every_harness_newest_first_and_only_this_folder(locs, isolated_home: Path) -> None:
    _install_fixture_world(isolated_home, CWD)
    other = ClaudeWriter(isolated_home / ".claude" / "projects" / "-elsewhere" / "aaaa.jsonl", "/elsewhere")
    other.turn(0, 100)
    other.write()
    found = sessions.list_sessions(locs, CWD)
    assert {s.harness for s in found} == {"claude-code", "codex", "pi", "omp"}
    assert len(found) == 7 and all(s.cwd == CWD for s in found)
    times = [s.last_activity for s in found]
    assert times == sorted(times, reverse=True)
    os.utime(found[-1].path, (2e9, 2e9))
    assert sessions.list_sessions(locs, CWD, limit=1)[0].path == found[-1].path
    assert [s.harness for s in sessions.list_sessions(locs, CWD, harnesses=("pi",))] == ["pi", "pi"]


def test_a_prefix_finds_sessions_in_any_folder(locs, isolated_home: Path) -> None:
    _install_fixture_world(isolated_home, CWD)
    assert [s.harness for s in sessions.find_by_prefix(locs, "469d47b9")] == ["claude-code"]
    assert len(sessions.find_by_prefix(locs, "01a228f1")) == 5  # codex x2, pi x2, omp: all UUIDv7 of one minute
    assert sessions.find_by_prefix(locs, "ffffffff") == []


def test_listing_a_missing_or_empty_world_finds_nothing(locs) -> None:
    assert sessions.list_sessions(locs, "/nowhere") == []
    shutil.rmtree(locs.home, ignore_errors=True)
    assert sessions.find_by_prefix(locs, "0") == []


def test_damaged_transcripts_are_skipped_not_fatal(locs, isolated_home: Path) -> None:
    _install_fixture_world(isolated_home, CWD)
    junk = [b"", b"\x00\xff garbage\n", b'{"type":"session","cwd":123}\n', b"[1,2,3]\n{\"type\":\n",
            b'{"type":"session_meta","payload":{"id":["x"],"cwd":"/work/app"}}\n']
    places = [isolated_home / ".claude" / "projects" / "-work-app", isolated_home / ".codex" / "sessions" / "2026",
              isolated_home / ".pi" / "agent" / "sessions" / "--work-app--",
              isolated_home / ".omp" / "agent" / "sessions" / "--work-app--"]
    for folder in places:
        folder.mkdir(parents=True, exist_ok=True)
        for n, data in enumerate(junk):
            name = f"rollout-2026-11-30T10-00-00-0000000{n}-0000-7000-8000-000000000000.jsonl"
            (folder / (name if "codex" in str(folder) else f"2026_{n}.jsonl")).write_bytes(data)
    found = sessions.list_sessions(locs, CWD, limit=50)
    assert len(found) == 7 and {s.harness for s in found} == {"claude-code", "codex", "pi", "omp"}
    assert sessions.find_by_prefix(locs, "0000000") == []
