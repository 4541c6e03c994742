"""`harnesslink review` (SPEC §11): it lists what needs a person, each item with why (an agent's
learning, a proposed supersession, an entry given often and never opened); on a terminal one key decides
each, through forget, supersede and confirm, recorded once in the history with actor cli; a kept item is
not listed again; --json and a stdin that is not a terminal list and ask nothing; Ctrl-C gives the
terminal back as it was. No memory tool can confirm or review."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from collections import Counter
from pathlib import Path

import pytest

from harnesslink_core import memory_tools
from harnesslink_core.commands import review
from harnesslink_core.main import main
from harnesslink_core.paths import locations
from harnesslink_core.store import history, trust
from harnesslink_core.store.scope import project_slug
from memory_helpers import REPO, make_env, write_entry

SHOP = "/home/dev/shop"
SLUG = project_slug(SHOP)

# the child a pty runs: `harnesslink review …`, then whether it left the terminal as it found it
CHILD = """
import sys, termios
from harnesslink_core.main import main
before = termios.tcgetattr(0)
code = main(sys.argv[1:])
print("TERMINAL", "restored" if termios.tcgetattr(0) == before else "changed", "EXIT", code, flush=True)
"""


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.env = make_env(tmp_path)
        self.locs = locations(self.env)
        answer = memory_tools.call("memory_bank", {"text": "Deploys to staging need the VPN up first."},
                                   memory_tools.Session(self.locs, SHOP, "codex", "cx-recorder"))
        self.learning = answer.split(" as ", 1)[1].split(".md", 1)[0] + ".md"
        self.noisy = self.entry("Renamed the CSS colour variables", "2026-08-01T09:00:00.000Z",
                                "Every --clr-* variable is now --colour-*; the old names are gone.")
        self.given(self.noisy, review.GIVEN_OFTEN)
        self.rarely_given = self.entry("Moved the fonts to a CDN", "2026-08-02T09:00:00.000Z",
                                       "Fonts load from the CDN.")
        self.given(self.rarely_given, review.GIVEN_OFTEN - 1)
        self.once_opened = self.entry("Pinned the node version", "2026-08-03T09:00:00.000Z", "node 20 in .nvmrc.")
        self.given(self.once_opened, review.GIVEN_OFTEN + 1, opened=1)
        self.newer = self.entry("The colour variables are generated from the design tokens",
                                "2026-08-20T09:00:00.000Z", "tokens.json generates every --colour-* variable.")

    def entry(self, title: str, ts: str, result: str) -> str:
        path = write_entry(self.locs, SHOP, title=title, ts=ts, result=result, harness="claude-code")
        return f"{SLUG}/bank/{path.name}"

    def given(self, entry: str, sessions: int, opened: int = 0) -> None:
        """What the prompt hook records when it gives an entry, and the pass when a session opens it."""
        history.append(self.locs, [history.event("given", "hook:codex", entry=entry, session=f"{entry[-20:]}-s{i}")
                                   for i in range(sessions)])
        history.append(self.locs, [history.event("opened", "autobank:codex", entry=entry, session=f"{entry[-20:]}-s{i}",
                                                 detail="memory_get") for i in range(opened)])

    def listed(self) -> list[dict]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["review", f"--project={SLUG}", "--json"]) == 0
        return json.loads(out.getvalue())["items"]

    def decisions(self) -> Counter:
        """(event, actor, entry) of every record a person's decision writes."""
        return Counter((r["event"], r["actor"], r["entry"]) for r in history.read(self.locs)
                       if r["event"] in ("reviewed", "forgotten", "superseded", "confirmed"))


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    made = World(tmp_path)
    monkeypatch.setenv("HARNESSLINK_HOME", made.env["HARNESSLINK_HOME"])
    return made


class Terminal:
    """`harnesslink review` run on a pseudo-terminal: read what it shows, type keys at it."""

    def __init__(self, env: dict[str, str], *argv: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: straight to a fresh interpreter
            # as on a person's terminal: a run started in the background (`cmd &` in a script, as CI may)
            # inherits SIGINT ignored, and Ctrl-C would then do nothing
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(SHOP if os.path.isdir(SHOP) else env["HOME"])
            os.execve(sys.executable, [sys.executable, "-c", CHILD, "review", *argv], env)
        self.output = ""

    def expect(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            assert self._read(deadline), f"the command ended before {text!r}:\n{self.output}"
        return self.output

    def _read(self, deadline: float) -> bool:
        """Add what the child wrote next to `output`; False once it has closed the terminal."""
        left = deadline - time.monotonic()
        assert left > 0, f"timed out; it showed:\n{self.output}"
        ready, _, _ = select.select([self.fd], [], [], left)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # Linux: EIO once the child is gone
            chunk = b""
        self.output += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return bool(chunk)

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def is_canonical(self) -> bool:
        """Whether the terminal reads whole lines (its usual mode) or single keys."""
        return bool(termios.tcgetattr(self.fd)[3] & termios.ICANON)

    def finish(self, timeout: float = 30.0) -> tuple[str, int]:
        """What the child said of the terminal when it ended, and its exit code."""
        deadline = time.monotonic() + timeout
        while self._read(deadline):
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        assert "TERMINAL" in self.output, self.output
        tail = self.output.rsplit("TERMINAL", 1)[1].split()
        return tail[0], int(tail[2])


def review_in_a_terminal(world: World, *keys: tuple[str, str]) -> str:
    """Answer each (shown text, key) in turn; the child must end with the terminal restored and exit 0."""
    term = Terminal(world.env, f"--project={SLUG}")
    for shown, key in keys:
        term.expect(shown)
        term.send(key)
    state, code = term.finish()
    assert (state, code) == ("restored", 0), term.output
    return term.output


def kinds(items: list[dict]) -> list[tuple[str, str]]:
    return [(item["kind"], item["entry"]) for item in items]


# --- what is listed, and why --------------------------------------------------------------------------------


def test_each_kind_of_item_is_listed_in_order_with_its_reason(world, monkeypatch, capsys):
    proposal = review.Proposal(world.rarely_given, world.newer, "both set up the fonts; the newer says they moved")
    monkeypatch.setattr(review, "proposed_supersessions", lambda locs, slugs: [proposal])
    capsys.readouterr()
    assert main(["review", f"--project={SLUG}", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert kinds(items) == [("recorded", world.learning), ("proposed", world.rarely_given), ("unopened", world.noisy)]
    recorded, proposed, unopened = items
    assert recorded["harness"] == "codex" and recorded["title"].startswith("Deploys to staging")
    assert "VPN up first" in recorded["excerpt"] and recorded["project"] == SLUG and recorded["ts"]
    assert "codex recorded it through memory_bank" in recorded["why"][0]["words"]
    assert proposed["newer"] == world.newer and "the newer says they moved" in proposed["why"][0]["words"]
    words = f"given to {review.GIVEN_OFTEN} sessions, opened by none"
    assert unopened["why"] == [{"reason": "unopened", "words": words}]
    assert (unopened["given"], unopened["opened"]) == (review.GIVEN_OFTEN, 0)


def test_a_learning_that_superseded_an_entry_says_which_and_the_superseded_one_is_not_listed(world):
    said = {"text": "CSS colours come from tokens.json now.", "supersedes": [world.noisy]}
    answer = memory_tools.call("memory_bank", said,
                               memory_tools.Session(world.locs, SHOP, "pi", "pi-1"))
    learning = answer.split(" as ", 1)[1].split(".md", 1)[0] + ".md"
    listed = {item["entry"]: item for item in world.listed()}
    assert world.noisy not in listed
    assert listed[learning]["why"][0]["words"].endswith(f"; it supersedes {world.noisy}")


def test_an_entry_given_to_fewer_sessions_or_opened_once_is_not_listed(world):
    listed = {item["entry"] for item in world.listed()}
    assert world.noisy in listed
    assert world.rarely_given not in listed and world.once_opened not in listed and world.newer not in listed


def test_all_reviews_every_project_and_the_default_only_this_one(world, capsys):
    answer = memory_tools.call("memory_bank", {"text": "The blog builds with hugo 0.120, not the snap."},
                               memory_tools.Session(world.locs, "/home/dev/blog", "claude-code", "cc-blog"))
    blog = answer.split(" as ", 1)[1].split(".md", 1)[0] + ".md"
    assert blog not in {item["entry"] for item in world.listed()}
    capsys.readouterr()
    assert main(["review", "--all", "--json"]) == 0
    listed = {item["entry"] for item in json.loads(capsys.readouterr().out)["items"]}
    assert listed == {world.learning, world.noisy, blog}


def test_entries_no_detector_looked_at_have_no_proposals(world):
    assert review.proposed_supersessions(world.locs, [SLUG]) == []
    assert "proposed" not in {item["kind"] for item in world.listed()}


def test_an_entry_listed_for_two_reasons_is_one_item_and_keeping_it_keeps_both(world):
    world.given(world.learning, review.GIVEN_OFTEN)
    [item] = [i for i in world.listed() if i["entry"] == world.learning]
    assert [why["reason"] for why in item["why"]] == ["recorded", "unopened"]
    review_in_a_terminal(world, ("[1/2]", "k"), ("[2/2]", "q"))
    assert world.learning not in {i["entry"] for i in world.listed()}


def test_superseded_confirmed_and_forgotten_entries_are_not_listed(world, capsys):
    world.given(world.newer, review.GIVEN_OFTEN)
    assert {world.learning, world.noisy, world.newer} <= {i["entry"] for i in world.listed()}
    assert main(["supersede", "--cwd", SHOP, "--", world.noisy, world.newer]) == 0
    assert main(["confirm", "--cwd", SHOP, "--", world.newer]) == 0
    assert main(["forget", "--yes", "--", world.learning]) == 0
    assert world.listed() == []


# --- one key each, recorded once with its actor -------------------------------------------------------------


@pytest.mark.parametrize("key, event", [("k", "reviewed"), ("f", "forgotten"), ("c", "confirmed")])
def test_each_key_does_what_it_says_and_is_recorded_once_as_cli(world, key, event):
    review_in_a_terminal(world, ("[1/2]", key), ("[2/2]", "q"))
    assert world.decisions() == Counter({(event, "cli", world.learning): 1})
    assert [item["entry"] for item in world.listed()] == [world.noisy]  # decided: not listed again
    path = world.locs.memories / world.learning
    if key == "f":
        assert not path.exists()
    else:
        assert path.exists()
    assert trust.state(world.locs, [SLUG]).of(world.learning) == ("confirmed" if key == "c" else "current")


def test_the_supersede_key_asks_for_the_newer_entry_and_supersedes_with_it(world):
    output = review_in_a_terminal(world, ("[1/2]", "\r"), ("[2/2]", "s"), ("newer entry's id", world.newer + "\n"))
    assert f"is superseded by {world.newer}" in output
    assert world.decisions() == Counter({("superseded", "cli", world.noisy): 1})
    assert trust.state(world.locs, [SLUG]).superseded_by(world.noisy)[0] == world.newer
    assert kinds(world.listed()) == [("recorded", world.learning)]  # Enter: left for later, listed again


def test_a_refused_supersession_says_why_and_asks_again(world):
    older = world.entry("An older note", "2026-07-01T09:00:00.000Z", "older")  # not newer than noisy
    output = review_in_a_terminal(world, ("[1/2]", "n"), ("[2/2]", "s"), ("newer entry's id", older + "\n"),
                                  ("not newer than", "k"))
    assert "only a newer entry supersedes an older one" in output
    assert world.decisions() == Counter({("reviewed", "cli", world.noisy): 1})


def test_keys_on_a_proposal_take_the_proposed_entry_and_keep_rejects_only_that_one(world, tmp_path, monkeypatch):
    """A proposal's `s` takes the proposed newer on Enter; `k` keeps the older entry against that proposal
    only. Nothing proposes supersessions yet, so a stand-in for the detector proposes two, in the child
    (a sitecustomize beside it) and here."""
    pairs = [(world.rarely_given, world.newer, "the fonts moved"), (world.noisy, world.newer, "generated now")]
    (tmp_path / "sitecustomize.py").write_text(
        "from harnesslink_core.commands import review\n"
        f"review.proposed_supersessions = lambda locs, slugs: [review.Proposal(*p) for p in {pairs!r}]\n")
    world.env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{world.env['PYTHONPATH']}"
    review_in_a_terminal(world, ("[1/4]", "n"), ("[2/4]", "s"), ("(Enter: ", "\n"), ("[3/4]", "k"), ("[4/4]", "q"))
    assert world.decisions() == Counter({("superseded", "cli", world.rarely_given): 1,
                                         ("reviewed", "cli", world.noisy): 1})
    assert trust.state(world.locs, [SLUG]).superseded_by(world.rarely_given)[0] == world.newer
    [kept] = [r for r in history.read(world.locs) if r["event"] == "reviewed"]
    assert kept["detail"] == f"kept: proposed {world.newer}"
    monkeypatch.setattr(review, "proposed_supersessions", lambda locs, slugs: [review.Proposal(*p) for p in pairs])
    assert kinds(world.listed()) == [("recorded", world.learning), ("unopened", world.noisy)]


def test_quit_leaves_the_rest_for_later_and_records_nothing(world):
    output = review_in_a_terminal(world, ("[1/2]", "q"))
    assert "reviewed 0; 2 left for later" in output
    assert world.decisions() == Counter()
    assert len(world.listed()) == 2


def test_a_key_that_means_nothing_shows_the_keys_and_asks_again(world):
    output = review_in_a_terminal(world, ("[1/2]", "x"), ("keys: k keep", "k"), ("[2/2]", "q"))
    assert world.decisions() == Counter({("reviewed", "cli", world.learning): 1})
    assert output.count("[1/2]") == 1


# --- asking nothing ------------------------------------------------------------------------------------------


def test_json_lists_the_items_without_asking_even_on_a_terminal(world):
    term = Terminal(world.env, f"--project={SLUG}", "--json")
    state, code = term.finish()  # no key sent: it must end on its own
    assert (state, code) == ("restored", 0)
    listed = json.loads(term.output.split("TERMINAL", 1)[0])["items"]
    assert kinds(listed) == [("recorded", world.learning), ("unopened", world.noisy)]
    assert world.decisions() == Counter()


def test_a_stdin_that_is_not_a_terminal_lists_and_asks_nothing(world):
    out = subprocess.run([sys.executable, "-m", "harnesslink_core.main", "review", f"--project={SLUG}"],
                         env=world.env, input="k\nk\nf\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "[1/2] Deploys to staging" in out.stdout and "[2/2] Renamed the CSS colour variables" in out.stdout
    assert "why: given to 5 sessions, opened by none" in out.stdout
    assert "stdin is not a terminal, so nothing was asked" in out.stdout
    assert world.decisions() == Counter()


def test_ctrl_c_gives_the_terminal_back_as_it_was(world):
    term = Terminal(world.env, f"--project={SLUG}")
    term.expect("q quit > ")
    assert not term.is_canonical()  # single keys while it asks
    term.send("\x03")
    state, code = term.finish()
    assert (state, code) == ("restored", 130)
    assert world.decisions() == Counter()


def test_nothing_to_review_says_so(tmp_path, capsys):
    capsys.readouterr()
    assert main(["review", f"--project={SLUG}"]) == 0
    assert capsys.readouterr().out.strip() == f"nothing to review in {SLUG}"


# --- people confirm, agents propose --------------------------------------------------------------------------


def test_no_memory_tool_can_confirm_or_review() -> None:
    """No tool is named for it, takes an argument for it, or calls the code that confirms or keeps."""
    words = ("confirm", "review")
    for name, tool in memory_tools.TOOLS.items():
        said = [name, *tool["inputSchema"]["properties"]]
        assert not [w for w in said if any(word in w.lower() for word in words)], name
    package = REPO / "harnesslink_core"
    extension = package / "harnesses" / "pi_family" / "extension.ts"
    for module in (package / "memory_tools.py", package / "mcp_server.py", extension):
        text = module.read_text(encoding="utf-8")
        assert "commands.review" not in text and "commands import review" not in text
        if module.suffix == ".py":
            calls = {node.func.attr for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
            assert "confirm" not in calls and "keep" not in calls, module.name


def test_the_help_explains_each_reason_and_key(capsys):
    with pytest.raises(SystemExit):
        main(["review", "--help"])
    text = capsys.readouterr().out
    for word in ("recorded", "proposed", "unopened", f"at least {review.GIVEN_OFTEN} sessions", "n, Enter"):
        assert word in text
