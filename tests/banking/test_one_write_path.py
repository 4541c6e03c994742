"""The write path as one road a newcomer can follow: the pass lock taken only through `store/lock.py`, an
entry reserved, written and marked banked only by `store/commit.py` (the pass, memory_bank and forget all
go through them), the pass's stages in modules of a readable size, and what a pass remembers while it runs
kept in its own objects, never in a module another caller shares."""

from __future__ import annotations

import ast
from pathlib import Path

from claude_builder import ClaudeSession

PACKAGE = Path(__file__).resolve().parents[2] / "harnesslink_core"
LONG = "Changed the handler and explained why, with the test that shows it. " * 4
MOST_LINES = 600


def modules() -> dict[str, ast.Module]:
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def calls(tree: ast.Module) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def method(call: ast.Call) -> tuple[str, str] | None:
    """(owner, name) of a call `owner.name(...)` whose owner is a plain name or an attribute."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value
    name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
    return name, func.attr


def test_the_pass_lock_is_taken_only_through_store_lock() -> None:
    """Of the modules that name the pass lock's file, one takes a lock itself (flock, or filelock where there
    is none); PassLock, which every writer holds, is defined once, there."""
    takers = {name for name, tree in modules().items()
              if any(isinstance(node, ast.Attribute) and node.attr == "pass_lock" for node in ast.walk(tree))
              and any(isinstance(node, ast.Name) and node.id == "FileLock"
                      or isinstance(node, ast.Attribute) and node.attr in ("flock", "FileLock")
                      for node in ast.walk(tree))}
    defined = {name for name, tree in modules().items()
               for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "PassLock"}
    assert takers == {"store/lock.py"}
    assert defined == {"store/lock.py"}


def test_an_entry_is_reserved_written_and_marked_only_by_store_commit() -> None:
    """Reserving a turn, staging, placing or rewriting its entry, and marking it banked: one module's calls."""
    steps = {("durable", "write"), ("durable", "stage"), ("durable", "sync_staged"), ("durable", "rewrite"),
             ("bank", "write"), ("bank", "stage"), ("bank", "sync_staged"), ("bank", "rewrite")}
    found = set()
    for name, tree in modules().items():
        for call in calls(tree):
            owner_name = method(call)
            if owner_name is None:
                continue
            owner, attr = owner_name
            banked = attr == "finish" and any(isinstance(a, ast.Constant) and a.value == "banked" for a in call.args)
            if (owner, attr) in steps or attr == "reserve" and owner == "ledger" or banked:
                found.add(name)
    assert found == {"store/commit.py"}


def test_no_module_of_the_write_path_is_longer_than_600_lines() -> None:
    paths = [*sorted((PACKAGE / "banking").glob("*.py")),
             *(PACKAGE / "store" / name for name in ("bank.py", "durable.py", "commit.py", "lock.py", "entries.py"))]
    long = {path.relative_to(PACKAGE).as_posix(): n for path in paths
            if path.exists() and (n := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES}
    assert long == {}


def test_what_a_pass_remembers_while_it_reads_is_in_no_module(locs, isolated_home: Path, monkeypatch) -> None:
    """While the pass reads its second transcript (the first one's turns redacted by then), neither the
    redaction module nor the readers' base module holds a text the pass redacted or the path it reads."""
    from harnesslink_core import redact
    from harnesslink_core.banking.autobank import run_pass
    from harnesslink_core.harnesses import base
    from harnesslink_core.harnesses.claude_code import reader as claude_code

    sessions = []
    for n in range(2):
        s = ClaudeSession(isolated_home, cwd=f"/work/app-{n}")
        s.turn(f"Deploy the worker number {n} to staging", LONG, tools=[("Bash", {"command": f"make deploy-{n}"})])
        s.flush()
        sessions.append(s)
    reads: list[Path] = []
    seen: list[tuple[list[str], list[str]]] = []
    real_read = claude_code.read

    def read(path, *args):
        reads.append(path)
        result = real_read(path, *args)  # while it reads, a reader's module may hold the path; after, nothing
        if len(reads) == 2:
            seen.append(([name for name, value in vars(redact).items() if "Deploy the worker number" in repr(value)],
                         [name for name, value in vars(base).items() if str(path) in repr(value)]))
        return result

    monkeypatch.setattr(claude_code, "read", read)
    assert run_pass(locs, paths=[s.path for s in sessions], harnesses=["claude-code"]).banked == 2
    assert seen and all(held == ([], []) for held in seen), seen
