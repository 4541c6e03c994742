"""A rendered entry carries its frontmatter and sections as the readers would parse them from its text
(`bank.Entry.meta`, `.sections`), so the pass hands them to MAIN.md, the summaries and the index instead
of reading back what it wrote (SPEC §5). Whenever it carries them, they must be exactly what parsing gives."""

from __future__ import annotations

import random
from pathlib import Path

from harnesslink_core.model import Action, Turn
from harnesslink_core.recall import index
from harnesslink_core.store import bank, durable, entries, projectfiles

ODD = ["\u2028", "\u2029", "\x85", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\ufeff", "\u200b", "\t", " ", "\n",
       "#", "## Result", "## Answer", "# Title", "---", '"', "'", ": ", " #", "[", "{", "&", "|", ">", "%",
       "@", "`", "!", "*", "<private>x</private>", "AKIAIOSFODNN7EXAMPLE", "é", "…"]


def _text(rng: random.Random, words: int, odd: float = 0.15) -> str:
    return "".join(rng.choice(ODD) if rng.random() < odd else rng.choice(["fix", "the", "bug", " ", "\n", "x1"])
                   for _ in range(words))


def _turn(rng: random.Random, i: int) -> Turn:
    odd = rng.choice([0.0, 0.002, 0.15])
    tools = rng.sample(["bash", "edit", "Read", "web fetch", '"q"', "", "---", "a\u2028b", "x #y"], rng.randint(0, 3))
    return Turn(
        harness=rng.choice(["claude-code", "codex", "pi", "omp", ""]),
        session_id=rng.choice(["s1", "s 2", '"s3"', "s\u20284", ""]),
        turn_id=str(i), cwd=rng.choice(["/home/me/app", "/home/me/a\x85b", " /x ", "/p#q", "/home/me/AKIAIOSFODNN7EXAMPLE"]),
        prompt=_text(rng, rng.randint(0, 40), odd), offset=0, started=1.7e9 + i, ended=1.7e9 + i + rng.random(),
        actions=[Action(tool=t, input={"command": _text(rng, 10, odd)}) for t in tools],
        result=_text(rng, rng.randint(0, 300), odd), title=rng.choice([None, "", _text(rng, 8, odd)]),
    )


def test_what_an_entry_carries_is_what_reading_it_gives(tmp_path):
    rng = random.Random(7)
    carried = 0
    for i in range(3000):
        entry = bank.render(_turn(rng, i))
        path = tmp_path / "proj" / "bank" / f"{entry.name_stem}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(entry.text.encode())
        if entry.meta is None:
            assert entry.sections is None
            continue
        carried += 1
        assert projectfiles.read_header(path) == entry.meta
        assert entries.entry_from(entry.meta, entry.sections, path, "proj") == entries.read_entry(path, "proj")
    assert 300 < carried < 3000  # both ways are exercised


def test_the_index_takes_the_entries_it_is_handed(locs, tmp_path):
    turn = Turn(harness="codex", session_id="s", turn_id="1", cwd="/home/me/app", prompt="Fix the login bug",
                offset=0, started=1.7e9, ended=1.7e9, actions=[Action(tool="bash", input={"command": "ls"})],
                result="Fixed it. " * 30)
    entry = bank.render(turn)
    folder = locs.memories / "proj" / "bank"
    path = durable.write(folder, entry)
    parsed = entries.entry_from(entry.meta, entry.sections, path, "proj")
    size = len(entry.text.encode())
    rel = f"proj/bank/{path.name}"
    held = parsed.__class__(**{**vars(parsed), "title": "handed in"})
    assert index.refresh(locs, ["proj"], {rel: (size, held)}) == 1
    conn = index.connect(locs)
    try:
        assert conn.execute("SELECT title FROM docs").fetchall() == [("handed in",)]
    finally:
        conn.close()
    # a file that is not what was handed in (another size) is read from disk
    path.write_bytes(path.read_bytes() + b"\nmore\n")
    index.delete_index_files(locs)
    assert index.refresh(locs, ["proj"], {rel: (size, held)}) == 1
    conn = index.connect(locs)
    try:
        assert conn.execute("SELECT title FROM docs").fetchall() == [("Fix the login bug",)]
    finally:
        conn.close()


def test_known_headers_stand_for_files_of_their_size(tmp_path: Path):
    project = tmp_path / "proj"
    turn = Turn(harness="pi", session_id="s", turn_id="1", cwd="/w", prompt="Write the notes",
                offset=0, started=1.7e9, ended=1.7e9, result="Done. " * 50)
    entry = bank.render(turn)
    path = durable.write(project / "bank", entry)
    size = len(entry.text.encode())
    projectfiles.rebuild_main(project, None, {path.name: (size, dict(entry.meta, title="Known"))})
    assert "Known" in (project / "MAIN.md").read_text()
    projectfiles.rebuild_main(project, None, {path.name: (size + 1, dict(entry.meta, title="Known"))})
    assert "Write the notes" in (project / "MAIN.md").read_text()
