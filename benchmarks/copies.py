"""Whether the content fingerprint folds copies of one answer and only those.

benchmarks/copies_reworded.json: 30 targets of the first, third and fourth labelled sets, each
written again twice by a helper: `light` (another run: some sentences reworded) and `heavy`
(another agent: the same facts in its own wording, order and lists). Every copy should fold into
its original; no two distinct targets of one project should.

    python -m benchmarks.copies
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from benchmarks import quality
from harnesslink_core.recall.fingerprint import NEAR_DUPLICATE, resemblance, sketch

COPIES = Path(__file__).with_name("copies_reworded.json")
SOURCES = (quality.QUERIES, quality.UNSEEN, quality.BLIND)


def measure() -> dict:
    data = quality.load_targets(SOURCES)
    by_id = {t["id"]: t for t in data["targets"]}
    of = {t["id"]: sketch(t["prompt"], t["answer"]) for t in data["targets"]}
    result: dict = {"threshold": NEAR_DUPLICATE}
    for kind in ("light", "heavy"):
        shares = sorted(resemblance(of[c["id"]], sketch(c[kind]["prompt"], c[kind]["answer"]))
                        for c in json.loads(COPIES.read_text()))
        result[kind] = {"copies": len(shares), "folded": sum(s >= NEAR_DUPLICATE for s in shares),
                        "least": round(shares[0], 2)}
    grouped = {frozenset(pair) for group in data["duplicates"] for pair in itertools.combinations(group, 2)}
    distinct = [resemblance(of[a], of[b]) for a, b in itertools.combinations(by_id, 2)
                if by_id[a]["project"] == by_id[b]["project"] and frozenset((a, b)) not in grouped]
    result["distinct"] = {"pairs": len(distinct), "folded": sum(s >= NEAR_DUPLICATE for s in distinct),
                          "most": round(max(distinct), 2)}
    return result


def main() -> int:
    r = measure()
    print(f"fold at an estimated share of content words >= {r['threshold']}")
    for kind in ("light", "heavy"):
        print(f"  {kind} copies folded: {r[kind]['folded']} of {r[kind]['copies']} (least share {r[kind]['least']})")
    print(f"  distinct targets of one project folded: {r['distinct']['folded']} of {r['distinct']['pairs']} pairs "
          f"(largest share {r['distinct']['most']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
