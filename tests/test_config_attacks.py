"""A hostile config.yml costs one bounded read, then the defaults, with the problem named in `harnesslink status`:
an alias bomb, nesting deep enough to overflow the parser's stack, and tens of thousands of globs each leave
the prompt hook quick and answering as documented, and no prompt parses YAML again until the file changes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harnesslink_core import config
from harnesslink_core.control import exclusion
from memory_helpers import SHOP, corpus_world, run_hook
from store.test_hostile_tree import cli

PROMPT = "why did signing in stop working right after 12am? something with the session cookie"
LOGIN_ENTRY = "2026-08-20T09-12-00-000Z--the-login-test-fails-every-night-around-midnight.md"


def bomb_under_exclude() -> str:
    """About 420 bytes that expand to 9**9 strings under memory.exclude."""
    anchors = ['x: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        anchors.append(f"{name}{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(anchors) + "\nmemory:\n  exclude: *i\n"


HOSTILE = {
    "alias bomb": bomb_under_exclude(),
    "deep nesting": "memory:\n  exclude: " + "[" * 5000 + "]" * 5000 + "\n",
    "20,000 globs": "memory:\n  exclude:\n" + "".join(f"    - /tmp/excluded-{n}/*\n" for n in range(20000)),
    "not YAML": "memory: [unclosed\n",
    "a 5,000-digit number": "memory:\n  autoBank: " + "7" * 5000 + "\n",
}


def prompt(env: dict[str, str], session: str = "s-new") -> tuple[dict, float]:
    started = time.monotonic()
    out = run_hook(env, "user-prompt-submit", "--harness", "codex", timeout=30, stdin=json.dumps(
        {"session_id": session, "cwd": SHOP, "prompt": PROMPT, "hook_event_name": "UserPromptSubmit"}))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), time.monotonic() - started


def yaml_spy(tmp_path: Path, env: dict[str, str]) -> Path:
    """A `yaml` first on the path that notes each import in a file, then hands over the real one."""
    spy, marker = tmp_path / "spy", tmp_path / "yaml-imported"
    spy.mkdir()
    (spy / "yaml.py").write_text(
        "import sys\n"
        f"open({str(marker)!r}, 'a').write('parsed\\n')\n"
        f"sys.path.remove({str(spy)!r})\n"
        "del sys.modules['yaml']\n"
        "import yaml\n")
    env["PYTHONPATH"] = f"{spy}:{env['PYTHONPATH']}"
    return marker


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_config_is_read_once_then_the_defaults_answer_quickly(tmp_path: Path, kind: str) -> None:
    env, locs = corpus_world(tmp_path)
    locs.config_file.write_text(HOSTILE[kind])
    marker = yaml_spy(tmp_path, env)
    parses = []
    for n in range(3):
        answer, elapsed = prompt(env, f"s-{n}")  # a new session each time: nothing given to it yet
        assert elapsed < 5.0
        assert LOGIN_ENTRY in answer["hookSpecificOutput"]["additionalContext"]  # the defaults: nothing excluded
        parses.append((marker.read_text() if marker.exists() else "").count("parsed"))
    # the changed file parsed by the first prompt (and perhaps the pass it started beside it), never again
    assert parses[0] <= 2 and parses[1:] == parses[:1] * 2
    status = cli(env, "status")
    assert status.returncode == 0, status.stderr
    line = next(line for line in status.stdout.decode().splitlines() if line.startswith("config.yml:"))
    assert "defaults" in line or "memory.exclude" in line


def test_many_globs_keep_the_first_ones_and_say_the_rest_are_left_out(tmp_path: Path) -> None:
    env, locs = corpus_world(tmp_path)
    globs = [f"/elsewhere/{n}" for n in range(1000)]
    locs.config_file.write_text("memory:\n  exclude:\n" + "".join(f"    - {g}\n" for g in globs))
    assert LOGIN_ENTRY in prompt(env)[0]["hookSpecificOutput"]["additionalContext"]
    locs.config_file.write_text("memory:\n  exclude:\n" + "".join(f"    - {g}\n" for g in [SHOP] + globs))
    assert prompt(env, "s-2")[0] == {}  # the first glob still keeps the project out
    switches = config.switches(locs)
    assert len(switches.exclude) == config.MAX_EXCLUDE and "only the first" in (switches.problem or "")
    assert "only the first 200 used" in cli(env, "status").stdout.decode()


def test_the_prompt_path_reads_the_cache_config_writes() -> None:
    assert (exclusion.CONFIG_CACHE, exclusion.MAX_EXCLUDE) == (config.CONFIG_CACHE, config.MAX_EXCLUDE)


def test_a_config_larger_than_the_bound_is_not_parsed(locs) -> None:
    locs.config_file.parent.mkdir(parents=True)
    locs.config_file.write_text("memory:\n  autoBank: false\n" + "# padding\n" * 10000)
    switches = config.switches(locs)
    assert switches.auto_bank and "larger than" in (switches.problem or "")


def filled(head: str, item: str, bound: int) -> str:
    """`head` then a flow list of as many `item`s under `padding:` as keep the text within `bound` bytes."""
    opening, closing = head + "padding: [", "]\n"
    room = bound - len((opening + closing).encode())
    return opening + ",".join([item] * ((room + 1) // (len(item) + 1))) + closing


def deepest_item(levels: int) -> str:
    """A flow list item of `padding` whose innermost scalar is `levels` deep (the root is 1, `padding`'s list 2)."""
    return "[" * (levels - 3) + "1" + "]" * (levels - 3)


def test_a_config_at_the_bounds_is_parsed_once_whoever_reads_it(tmp_path: Path) -> None:
    """A valid config.yml as costly as the bounds allow (its size, nested as deep as accepted) is parsed
    quickly and once: the prompt hook, its pass, status and the encoder's settings all read what that parse
    left. One level deeper, or an alias, and it is refused whole."""
    env, locs = corpus_world(tmp_path)
    head = f"memory:\n  exclude: [{SHOP}]\nrecall:\n  encoder: false\n"
    locs.config_file.write_text(filled(head, deepest_item(config.MAX_DEPTH), config.MAX_CONFIG_BYTES))
    marker = yaml_spy(tmp_path, env)
    answer, elapsed = prompt(env)
    assert answer == {} and elapsed < 1.5  # parsed (the project is kept out), within a prompt's budget
    for n in range(2):
        assert prompt(env, f"s-{n}")[0] == {}
        status = cli(env, "status")
        assert status.returncode == 0 and "encoder: off" in status.stdout.decode(), status.stdout
    assert marker.read_text().count("parsed") == 1

    for text, problem in ((head + f"padding: [{deepest_item(config.MAX_DEPTH + 1)}]\n", "nests deeper than"),
                          (f"x: &a {SHOP}\nmemory:\n  exclude: [*a]\n", "alias")):
        locs.config_file.write_text(text)
        answer, _ = prompt(env, f"s-{problem}")  # a session of its own: each entry is given once per session
        assert LOGIN_ENTRY in answer["hookSpecificOutput"]["additionalContext"]
        assert problem in cli(env, "status").stdout.decode()


def test_a_config_past_the_bound_costs_the_first_prompt_nothing(tmp_path: Path) -> None:
    """A valid 64 KB config.yml of nested flow lists took the first prompt 2.5 s to parse: past the bound,
    it is not parsed."""
    env, locs = corpus_world(tmp_path)
    locs.config_file.write_text(filled("memory:\n  autoBank: true\n", "[[[[[[[[[[1]]]]]]]]]]", 64 * 1024 - 1))
    answer, elapsed = prompt(env)
    assert LOGIN_ENTRY in answer["hookSpecificOutput"]["additionalContext"] and elapsed < 1.0
    assert "larger than" in cli(env, "status").stdout.decode()
