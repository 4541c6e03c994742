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


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("status", help="Show what each harness has banked, pending and failed")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


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
            records = ledger.files(name)
            counts = ledger.counts(name)
            row = ledger.harness_row(name)
            backlog = 0
            seen = 0
            for path in harness.iter_transcripts(locs):
                seen += 1
                rec = records.get(os.fspath(path))
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                window = row.window_start if row else time.time() - 30 * 86400
                if rec is None and st.st_mtime >= window:
                    backlog += 1
                elif rec is not None and rec.read_end is not None and (rec.size, rec.mtime) != (st.st_size, st.st_mtime):
                    backlog += 1
            errors = ledger.errors(name, since=time.time() - 86400)
            entry: dict[str, Any] = {
                "enabled": switches.auto_bank and name in switches.autobank,
                "detected": harness.detect(locs),
                "transcripts": seen,
                "excluded_transcripts": sum(1 for r in records.values() if r.excluded),
                "kept_out_transcripts": sum(1 for r in records.values() if (r.excluded or "").startswith(KEPT_OUT)),
                "excluded": counts.get("excluded", 0),
                "forgotten": counts.get("forgotten", 0),
                "banked": counts.get("banked", 0),
                "skipped": counts.get("skipped", 0),
                "dropped": counts.get("dropped", 0),
                "duplicates": counts.get("duplicate", 0),
                "pending": sum(r.open_turns for r in records.values()) + counts.get("reserved", 0),
                "backlog": backlog,
                "bad_lines": sum(r.bad_lines for r in records.values()),
                "errors_24h": len(errors),
                "last_error": errors[-1].message if errors else None,
                "last_pass": clock.iso(row.last_pass) if row and row.last_pass else None,
                "window_start": clock.iso(row.window_start) if row else None,
            }
            entry["unreadable"] = harness.unreadable(locs)
            out["harnesses"][name] = entry
    finally:
        ledger.close()
    out["joined"] = joined_projects(locs)
    return out


def joined_projects(locs: Locations) -> dict[str, list[str]]:
    """Repositories whose memory sits under more than one slug (other paths, clones, worktrees, machines):
    each is searched as one project (SPEC §11)."""
    from ..store.identity import tree_identities

    groups: dict[str, list[str]] = {}
    for slug, repository in sorted(tree_identities(locs).items()):
        groups.setdefault(repository, []).append(slug)
    return {repository: slugs for repository, slugs in groups.items() if len(slugs) > 1}


def run(args: argparse.Namespace, locs: Locations) -> int:
    data = collect(locs)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"agent dir: {data['agent_dir']}")
    if data["config_problem"]:
        print(f"config.yml: {data['config_problem']} (using defaults)")
    if not data["auto_bank"]:
        print("memory.autoBank is false: nothing is banked")
    quiet = [name for name, h in data["harnesses"].items() if _idle(h)]
    for name, h in data["harnesses"].items():
        if name in quiet:
            continue
        state = "on" if h["enabled"] else "off"
        print(f"\n{name}: {state}{'' if h['detected'] else ' (not detected)'}")
        kept_out = h["kept_out_transcripts"]
        others = h["excluded_transcripts"] - kept_out
        print(f"  transcripts seen {h['transcripts']}, backlog {h['backlog']}"
              + (f"; not banked: {others} (subagents, reviews)" if others else "")
              + (f"; in projects kept out: {kept_out}" if kept_out else ""))
        print(f"  turns banked {h['banked']}, skipped {h['skipped']}, pending {h['pending']}, "
              f"dropped {h['dropped']}, duplicates {h['duplicates']}, excluded {h['excluded']}, "
              f"forgotten {h['forgotten']}")
        if h.get("unreadable"):
            print(f"  unreadable: {h['unreadable']}")
        print(f"  errors (24h) {h['errors_24h']}, unreadable lines {h['bad_lines']}"
              + (f"; last: {h['last_error']}" if h["last_error"] else ""))
        print(f"  last pass {h['last_pass'] or 'never'}")
    if quiet:
        listed = ", ".join(f"{n} ({'on' if data['harnesses'][n]['enabled'] else 'off'})" for n in quiet)
        print(f"\nnot detected, nothing to show: {listed}")
    for repository, slugs in data["joined"].items():
        print(f"\none project, the same repository {repository} (its IDENTITY.md): {', '.join(slugs)}")
    return 0


def _idle(h: dict[str, Any]) -> bool:
    """Not detected and with nothing to show: one line for all of them."""
    return (not h["detected"] and not h["transcripts"] and not h["banked"]
            and not h["errors_24h"] and not h.get("unreadable"))
