"""Whether a session used what it was given (SPEC §11): which given entries a turn opened.

A session opened an entry when one of its tool calls is our `memory_get` naming it (however the
harness names the tool: the readers turn every spelling into `harnesslink.memory_get`), a file-reading
tool given its path (Claude Code's `Read`, pi's `read`), or a shell command that reads it (`cat`,
`sed -n`, `head` … of the file). Only entries that very session was given count (by the prompt hook, or
listed in its brief); a turn's calls are looked at once, when the pass settles it, and each (session,
entry) is recorded once (`ledger.note_opened`).

Repeating an entry's distinctive facts is use too (SPEC §11): an answer that holds at least
`FACTS_NEEDED` of the entry's facts (`facts`: tokens shaped like names and values, `pool_size`,
`src/db/pool.py`, `RedisStore`, `v2.3.1`, never plain words) that neither the prompt nor any of the turn's own
tool calls holds, so they came from memory and not from the user or the agent's own look. An entry of
the same session, or one given only after the turn ended, never counts this way.
"""

from __future__ import annotations

from ..store.history import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model import Turn

GET = "harnesslink.memory_get"
READ_TOOLS = {"read", "read_file", "view", "open", "open_file", "cat"}
SHELL_READERS = {"cat", "sed", "head", "tail", "less", "more", "bat", "nl", "awk", "grep", "rg", "view", "batcat"}
BANK_MARK = "bank/"  # every entry's path holds it: a call without it names no entry by path
REPEATED = "answer"  # how an entry was used when the answer repeats its facts
FACTS_NEEDED = 3
FACT_CHARS = 4
FACT_SCAN = 20_000  # characters of an answer or an entry whose facts are read
OWN_SCAN = 200_000  # characters of a turn's prompt and calls a fact is looked up in
EDGES = "`'\"()[]{}<>,;:.!?*"  # stripped from a token's ends


def references(turn: Turn) -> list[tuple[str, str]]:
    """(how, text) of each of the turn's calls that may name an entry: cheap, no ledger read."""
    found = []
    for action in turn.actions:
        if action.tool == GET:
            wanted = action.input.get("id") if isinstance(action.input, dict) else action.input
            if isinstance(wanted, str) and wanted.strip():
                found.append(("memory_get", wanted.strip()))
        elif action.tool in READ_TOOLS or action.tool == "bash":
            text = " ".join(_strings(action.input))
            if BANK_MARK in text and ".md" in text:
                if action.tool != "bash":
                    found.append((action.tool, text))
                elif _reads(text):
                    found.append(("shell", text))
    return found


def opened(refs: list[tuple[str, str]], given: set[str]) -> dict[str, str]:
    """The given entries (`<slug>/bank/<file>.md`) these references open, each with how."""
    out: dict[str, str] = {}
    for how, text in refs:
        for entry in given:
            if entry not in out and _names(how, text, entry):
                out[entry] = how
    return out


class Answer:
    """A turn's answer as `repeats` reads it: its facts (of its first `FACT_SCAN` characters) and what the
    turn brought itself (its prompt and its calls' inputs), worked out once for every entry it is held to."""

    __slots__ = ("facts", "own")

    def __init__(self, turn: Turn) -> None:
        self.facts = facts(turn.result[:FACT_SCAN])
        self.own = " ".join([turn.prompt, *(s for a in turn.actions for s in _strings(a.input))])[:OWN_SCAN].lower()

    def repeats(self, entry_text: str) -> bool:
        """Whether the answer repeats enough of the entry's facts that the turn did not bring itself."""
        if len(self.facts) < FACTS_NEEDED:
            return False
        answered = facts(entry_text[:FACT_SCAN]) & self.facts
        return len({fact for fact in answered if fact.lower() not in self.own}) >= FACTS_NEEDED


def facts(text: str) -> set[str]:
    """The tokens of `text` shaped like names or values: a digit next to a letter, `_` or `/` inside, a
    dot between letters (`config.yml`), or a capital after a small letter (`RedisStore`). A setting is
    cut at its `=`, so `pool_size=50` and `pool_size: 50` both give `pool_size`."""
    found = set()
    for raw in text.split():
        for token in raw.split("="):
            token = token.strip(EDGES)
            if len(token) >= FACT_CHARS and _fact_shaped(token):
                found.add(token)
    return found


def _fact_shaped(token: str) -> bool:
    letters = digits = False
    previous = ""
    for i, char in enumerate(token):
        if char.isalpha():
            if char.isupper() and previous.islower():
                return True
            letters = True
        elif char.isdigit():
            digits = True
        elif char in "_/" and 0 < i < len(token) - 1:
            return True
        elif char == "." and previous.isalpha() and token[i + 1:i + 2].isalpha():
            return True
        previous = char
    return letters and digits


def _names(how: str, text: str, entry: str) -> bool:
    if how == "memory_get":  # an id, a file name, a time id or a path inside the memory folder
        return names(entry, text.replace("\\", "/"))
    return entry in text or ("/" + entry.rsplit("/", 1)[-1]) in text  # absolute, or from the memories folder


def _reads(command: str) -> bool:
    for part in command.replace("|", " ").replace(";", " ").replace("&&", " ").split():
        if part.rsplit("/", 1)[-1] in SHELL_READERS:
            return True
    return False


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
