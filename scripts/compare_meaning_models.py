"""How well a static model tells the right entry from a wrong one, on the development sets.

    /tmp/distill/bin/pip install wordllama==0.4.0.post1    # in the build environment of build_meaning_model.py
    /tmp/distill/bin/python scripts/compare_meaning_models.py

For each labelled query of the third to sixth sets: the cosine of the query and its target
(the target's prompt and answer); for each never-done query: the best cosine over the targets
of its project. The area under the ROC curve of the two (the chance that a right answer
scores above the best wrong one), and how often the target is the nearest of its project's
targets, for our shipped table (`meaning.Model`, centred and not) and for WordLlama's 256-d
table (its own package, numpy), centred the same way (the mean over the first set's texts).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harnesslink_core.recall import meaning  # noqa: E402

SETS = ("queries_unseen", "queries_blind", "queries_final", "queries_sixth")


def wordllama_embedder():
    import wordllama

    package = Path(wordllama.__file__).parent
    if not (package / "tokenizer").exists():  # 0.4.0 looks for its shipped tokenizer under this name
        (package / "tokenizer").symlink_to(package / "tokenizers")
    model = wordllama.WordLlama.load(dim=256, disable_download=True)
    return lambda text: model.embed([text], norm=True)[0]


def ours(centred: bool):
    model = meaning.Model(centred=centred)
    return lambda text: np.array(model.vector(text) or [0.0] * meaning.DIMS)


def score(embed, centre) -> list[tuple[float, float]]:
    out = []
    for name in SETS:
        data = json.loads((ROOT / "benchmarks" / f"{name}.json").read_text())

        def unit(text):
            v = embed(text) - centre
            n = np.linalg.norm(v)
            return v / n if n else v

        vectors = {t["id"]: unit(t["prompt"] + "\n" + t["answer"]) for t in data["targets"]}
        project = {t["id"]: t["project"] for t in data["targets"]}
        right, wrong, nearest = [], [], 0
        for q in data["queries"]:
            v = unit(q["query"])
            own = {i: float(v @ vectors[i]) for i in vectors if project[i] == project[q["target"]]}
            right.append(own[q["target"]])
            nearest += max(own, key=own.get) == q["target"]
        for q in data["never_done"]:
            v = unit(q["query"])
            wrong.append(max(float(v @ vectors[i]) for i in vectors if project[i] == q["project"]))
        right_a, wrong_a = np.array(right), np.array(wrong)
        out.append((float((right_a[:, None] > wrong_a[None, :]).mean()), nearest / len(data["queries"])))
    return out


def main() -> int:
    first = json.loads((ROOT / "benchmarks" / "queries.json").read_text())
    texts = [t["prompt"] + "\n" + t["answer"] for t in first["targets"]] + [q["query"] for q in first["queries"]]
    models = {"ours, not centred": (ours(False), False), "ours (shipped)": (ours(True), False),
              "wordllama 256": (wordllama_embedder(), False), "wordllama 256, centred": (wordllama_embedder(), True)}
    print("| model | " + " | ".join(s.removeprefix("queries_") for s in SETS) + " | mean |")
    print("|---|" + "---|" * (len(SETS) + 1))
    for name, (embed, centre_it) in models.items():
        centre = np.mean([embed(t) for t in texts], axis=0) if centre_it else np.zeros(len(embed("x")))
        rows = score(embed, centre)
        cells = [f"AUC {auc:.3f}, nearest {near:.2f}" for auc, near in rows]
        print(f"| {name} | " + " | ".join(cells) + f" | AUC {np.mean([a for a, _ in rows]):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
