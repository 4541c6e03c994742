"""`harnesslink status [--json]`: per harness, what is on, seen, banked, pending and wrong."""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from .. import clock, config
from ..banking.autobank import KEPT_OUT
from ..harnesses import registry
from ..paths import Locations
from ..store.ledger import open_ledger
from . import encoder

WORDS = """columns, one row per harness:
  on           banking is on for it (config.yml cloud.autobank, memory.autoBank); off: paused, entries stay
  transcripts  its transcript files found on this machine
  banked       finished turns written to the memory tree, each once
  skipped      turns with no tool call and a short answer: nothing worth keeping
  pending      turns still open (waiting for the agent's answer), or being written by a pass right now
  dropped      turns that never finished and were given up after 7 days
  errors       problems in the last 24 hours (the log has the details)
  backlog      transcripts with new bytes not read yet: the next pass reads them
  last pass    when a pass last read its transcripts
also: duplicates (copies of a turn already banked, from a resumed or forked session), excluded (turns of
  folders kept out), forgotten (taken back with `harnesslink forget`), transcripts not banked (subagents,
  reviews: never banked).
below the table, per harness whose sessions were given memory:
  given N      entries the prompt hook gave its sessions (each entry once per session)
  opened M     how many of those the session then opened: memory_get, a read of the entry's file, or
               an answer repeating its facts (k % of what it was given; `harnesslink history` lists each)
  listed in briefs N, opened M: the same of the entries the session-start briefs listed
lines below the table say what needs you (a broken config.yml, unreadable files, errors), which
folders are one project because they are the same repository (their IDENTITY.md), and how many
entries the search index holds and how many have their meaning vector yet (what lets a search find
an entry that shares no word with it; until then that entry is found by its words)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("status", help="Show what each harness has banked, pending and failed",
                                   description="What each harness has banked, what is pending and what went wrong.",
                                   epilog=WORDS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="machine-readable output (the same numbers, and more)")


def collect(locs: Locations) -> dict[str, Any]:
    switches = config.switches(locs)
    ledger = open_ledger(locs)
    out: dict[str, Any] = {
        "agent_dir": str(locs.agent_dir),
        "auto_bank": switches.auto_bank,
        "config_problem": switches.problem,
        "harnesses": {},
    }
    try:
        for name, harness in registry.available().items():
            counts = ledger.counts(name)
            row = ledger.harness_row(name)
            window = row.window_start if row else time.time() - 30 * 86400
            backlog = 0
            seen = 0
            for path in harness.iter_transcripts(locs):
                seen += 1
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                known = ledger.position(os.fspath(path))  # (size, mtime, read end)
                if known is None:
                    backlog += st.st_mtime >= window
                elif known[2] is not None and known[:2] != (st.st_size, st.st_mtime):
                    backlog += 1
            not_banked, kept_out, open_turns, bad_lines = ledger.file_totals(name, KEPT_OUT)
            errors = ledger.errors(name, since=time.time() - 86400)
            entry: dict[str, Any] = {
                "enabled": switches.auto_bank and name in switches.autobank,
                "detected": harness.detect(locs),
                "transcripts": seen,
                "excluded_transcripts": not_banked,
                "kept_out_transcripts": kept_out,
                "excluded": counts.get("excluded", 0),
                "forgotten": counts.get("forgotten", 0),
                "banked": counts.get("banked", 0),
                "skipped": counts.get("skipped", 0),
                "dropped": counts.get("dropped", 0),
                "duplicates": counts.get("duplicate", 0),
                "pending": open_turns + counts.get("reserved", 0),
                "backlog": backlog,
                "bad_lines": bad_lines,
                "errors_24h": len(errors),
                "last_error": errors[-1].message if errors else None,
                "last_pass": clock.iso(row.last_pass) if row and row.last_pass else None,
                "window_start": clock.iso(row.window_start) if row else None,
            }
            entry["unreadable"] = harness.unreadable(locs)
            out["harnesses"][name] = entry
        use = ledger.use_counts()
        listed = ledger.use_counts(in_brief=True)
    finally:
        ledger.close()
    for name, entry in out["harnesses"].items():
        entry["given"], entry["opened"] = use.get(name, (0, 0))
        entry["briefed"], entry["briefed_opened"] = listed.get(name, (0, 0))
    out["joined"] = joined_projects(locs)
    out["search"] = search_index(locs)
    out["encoder"] = encoder.describe(locs)
    out["trust_withheld"] = trust_withheld(locs, os.getcwd())
    return out


def trust_withheld(locs: Locations, cwd: str) -> dict[str, str]:
    """The projects in this folder's scope whose TRUST.md the hooks cannot read within their budget, and why
    (`trust.superseded_within`, over the projects the prompt hook searches): none of their entries is pushed."""
    from ..safefile import tree_folder
    from ..store.scope import scope_folders
    from ..store.trust import superseded_within

    slugs = [slug for slug in scope_folders(locs, cwd) if tree_folder(str(locs.memories), slug, "bank")]
    return superseded_within(locs, slugs)[1]


def search_index(locs: Locations) -> dict[str, Any]:
    """How many entries the search index holds, and how many of them have their meaning vector yet."""
    from ..recall import encoded, index, query, vectors

    try:
        conn = index.connect(locs, create=False, busy_ms=1000)
    except index.IndexUnavailable as exc:
        return {"entries": None, "without_vectors": None, "without_encoder_vectors": None, "problem": str(exc),
                "unusable": isinstance(exc.__cause__, index.NotARegularFile)}
    try:
        return {"entries": query.count(conn), "without_vectors": vectors.pending(conn),
                "without_encoder_vectors": encoded.pending(conn) if encoded.any_made(conn) else None,
                "problem": None}
    except index.sqlite3.Error as exc:
        return {"entries": None, "without_vectors": None, "without_encoder_vectors": None, "problem": str(exc)}
    finally:
        conn.close()


def joined_projects(locs: Locations) -> dict[str, list[str]]:
    """Repositories whose memory sits under more than one slug (other paths, clones, worktrees, machines):
    each is searched as one project (SPEC §11)."""
    from ..store.identity import tree_identities

    groups: dict[str, list[str]] = {}
    for slug, folders in sorted(tree_identities(locs).items()):
        for repository in sorted(set(folders.values()) - {""}):
            groups.setdefault(repository, []).append(slug)
    return {repository: slugs for repository, slugs in groups.items() if len(slugs) > 1}


def run(args: argparse.Namespace, locs: Locations) -> int:
    data = collect(locs)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(table(data))
    for line in use_lines(data):
        print(line)
    for line in needs_you(data):
        print(line)
    for repository, slugs in data["joined"].items():
        print(f"one project, the repository {repository} (IDENTITY.md): {', '.join(slugs)}")
    print(search_line(data["search"]))
    print(encoder.line(data["encoder"]))
    print(encoder.vectors_line(data["search"]))
    print(f"memory: {data['agent_dir']}   (harnesslink status --help explains each column)")
    return 0


COLUMNS = ("harness", "on", "transcripts", "banked", "skipped", "pending", "dropped", "errors", "backlog", "last pass")


def table(data: dict[str, Any]) -> str:
    """One row per harness detected or with something to show; the others on one line below."""
    rows = [COLUMNS]
    quiet = []
    for name, h in data["harnesses"].items():
        if _idle(h):
            quiet.append(name)
            continue
        rows.append((name + ("" if h["detected"] else " (not found)"), "on" if h["enabled"] else "off",
                     str(h["transcripts"]), str(h["banked"]), str(h["skipped"]), str(h["pending"]), str(h["dropped"]),
                     str(h["errors_24h"]), str(h["backlog"]), (h["last_pass"] or "never")[:16].replace("T", " ")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    if quiet:
        lines.append("not found, nothing to show: " + ", ".join(
            f"{n} ({'on' if data['harnesses'][n]['enabled'] else 'off'})" for n in quiet))
    return "\n".join(lines)


def use_lines(data: dict[str, Any]) -> list[str]:
    """Per harness whose sessions were given memory: "given N, opened M (k %)", and the same of what
    its briefs listed."""
    lines = []
    for name, h in data["harnesses"].items():
        parts = [f"{what} {h[given]}, opened {h[opened]} ({round(100 * h[opened] / h[given])} %)"
                 for what, given, opened in (("given", "given", "opened"),
                                             ("listed in briefs", "briefed", "briefed_opened")) if h[given]]
        if parts:
            lines.append(f"{name}: " + "; ".join(parts))
    return lines


def search_line(search: dict[str, Any]) -> str:
    if search.get("unusable"):
        return f"search index: unusable, {search['problem']}"
    if search["entries"] is None:
        return f"search index: not there yet ({search['problem']}); the next pass makes it"
    line = f"search index: {search['entries']} entries"
    missing = search["without_vectors"]
    if missing is None:
        return line + "; meaning vectors not built yet (the background pass builds them; words are searched now)"
    if missing:
        done = search["entries"] - missing
        return line + f"; meaning vectors for {done} of them, {missing} to go (the background pass builds them)"
    return line + ", each with its meaning vector"


def needs_you(data: dict[str, Any]) -> list[str]:
    """A line for each thing a person should look at."""
    lines = []
    if data["config_problem"]:
        lines.append(f"config.yml: {data['config_problem']}")
    if not data["auto_bank"]:
        lines.append("memory.autoBank is false in config.yml: nothing is banked")
    for slug, why in data["trust_withheld"].items():
        lines.append(f"{slug}: {why}, so the hooks push none of its entries to sessions here (a search still finds "
                     "them); move the lines that are not events out of that file, or unlink the project")
    for name, h in data["harnesses"].items():
        if h.get("unreadable"):
            lines.append(f"{name}: cannot read {h['unreadable']}")
        if h["errors_24h"]:
            lines.append(f"{name}: {h['errors_24h']} errors in 24 hours; last: {h['last_error']}")
        if h["bad_lines"]:
            lines.append(f"{name}: {h['bad_lines']} transcript lines could not be read and were skipped")
        if h["kept_out_transcripts"]:
            lines.append(f"{name}: {h['kept_out_transcripts']} transcripts are of folders kept out of memory")
        others = h["excluded_transcripts"] - h["kept_out_transcripts"]
        also = [f"{h[key]} {word}" for key, word in (("duplicates", "duplicates"), ("excluded", "excluded"),
                                                      ("forgotten", "forgotten")) if h[key]]
        if others:
            also.append(f"{others} transcripts not banked (subagents, reviews)")
        if also:
            lines.append(f"{name}: also {', '.join(also)}")
    return lines


def _idle(h: dict[str, Any]) -> bool:
    """Not detected and with nothing to show: one line for all of them."""
    return (not h["detected"] and not h["transcripts"] and not h["banked"]
            and not h["errors_24h"] and not h.get("unreadable"))
