"""Supersession detection on a labelled set of true pairs and look-alikes: precision and recall.

    python -m benchmarks.supersession [benchmarks/supersession_pairs.json] [--show]

The set's entries are rendered as the banker renders a turn (their files as edits, their commands as shell
calls) and banked into a temporary HOME, indexed, then given to the detector one by one, oldest first, as
the pass gives it what it just banked (`control.detect.propose`: the proposals land in TRUST.md). A proposal
of a labelled true pair is right, of a labelled look-alike wrong; one of a pair the set does not label is
listed and counted wrong in `strict`. The `strong` tier is scored the same way (it is never applied).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harnesslink_core.clock import parse_iso  # noqa: E402
from harnesslink_core.control import detect  # noqa: E402
from harnesslink_core.model import Action, Turn  # noqa: E402
from harnesslink_core.paths import locations  # noqa: E402
from harnesslink_core.recall import index  # noqa: E402
from harnesslink_core.store import bank, durable, trust  # noqa: E402

DEFAULT = Path(__file__).with_name("supersession_pairs.json")


def turn_of(item: dict) -> Turn:
    cwd = item["project"]
    actions = [Action("edit", {"file_path": os.path.join(cwd, f), "old_string": "…", "new_string": "…"})
               for f in item.get("files", [])]
    actions += [Action("bash", {"command": c}) for c in item.get("commands", [])]
    at = parse_iso(item["ts"]) or 0.0
    return Turn(harness=item.get("harness", "claude-code"), session_id=f"s-{item['id']}", turn_id=item["id"],
                cwd=cwd, prompt=item["prompt"], offset=0, started=at - 60, ended=at, actions=actions,
                result=item["result"], closed=True, title=item.get("title"))


def measure(data: dict, home: Path) -> dict:
    env = {"HOME": str(home), "HARNESSLINK_HOME": str(home / "agent")}
    locs = locations(env)
    by_id: dict[str, str] = {}
    paths: dict[str, Path] = {}
    for item in data["entries"]:
        turn = turn_of(item)
        path = durable.write(locs.memories / bank.project_slug(turn.cwd) / "bank", bank.render(turn))
        by_id[item["id"]] = f"{path.parent.parent.name}/bank/{path.name}"
        paths[item["id"]] = path
    index.rebuild(locs)
    found: list[detect.Finding] = []
    for item in sorted(data["entries"], key=lambda i: parse_iso(i["ts"]) or 0.0):
        found += detect.propose(locs, [paths[item["id"]]])
    ids = {rel: key for key, rel in by_id.items()}
    labels = {(by_id[p["older"]], by_id[p["newer"]]): p for p in data["pairs"]}
    slugs = sorted({rel.split("/", 1)[0] for rel in by_id.values()})
    in_tree = {p.pair for p in trust.read_proposals(locs, slugs)}
    assert in_tree == {(f.old, f.newer) for f in found}, "every proposal is in the tree, and only those"
    applied = trust.superseded_paths(locs, slugs)
    report = {"entries": len(data["entries"]), "pairs": len(labels),
              "true pairs": sum(p["supersedes"] for p in labels.values()),
              "look-alikes": sum(not p["supersedes"] for p in labels.values()),
              "applied": len(applied)}
    for tier, chosen in (("proposed", found), ("strong", [f for f in found if f.strong])):
        pairs = {(f.old, f.newer) for f in chosen}
        right = [pair for pair in pairs if pair in labels and labels[pair]["supersedes"]]
        wrong = [pair for pair in pairs if pair in labels and not labels[pair]["supersedes"]]
        unlabelled = [pair for pair in pairs if pair not in labels]
        report[tier] = {
            "proposals": len(pairs), "right": len(right), "wrong": len(wrong), "unlabelled": len(unlabelled),
            "precision": _ratio(len(right), len(right) + len(wrong)),
            "strict precision": _ratio(len(right), len(pairs)),
            "recall": _ratio(len(right), report["true pairs"]),
            "wrong pairs": [f"{ids[a]} -> {ids[b]}: {labels[(a, b)]['why']}" for a, b in sorted(wrong)],
            "unlabelled pairs": [f"{ids[a]} -> {ids[b]}" for a, b in sorted(unlabelled)],
        }
    missed = [p for pair, p in labels.items() if p["supersedes"] and pair not in {(f.old, f.newer) for f in found}]
    report["missed"] = [f"{p['older']} -> {p['newer']}: {p['why']}" for p in missed]
    report["evidence"] = [f"{ids[f.old]} -> {ids[f.newer]}{' (strong)' if f.strong else ''}: {f.evidence}"
                          for f in found]
    return report


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", nargs="?", default=str(DEFAULT))
    parser.add_argument("--show", action="store_true", help="also print each proposal's evidence")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.set).read_text("utf-8"))
    with tempfile.TemporaryDirectory(prefix="supersession-") as tmp:
        report = measure(data, Path(tmp))
    if not args.show:
        report.pop("evidence")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
