"""What makes the resident encoder's RSS once warm, part by part, in one process as the encoder builds it:
`python benchmarks/encoder_parts.py [--variant NAME ...]`.

Each stage prints VmRSS, its anonymous and file-backed parts (RssAnon, RssFile) and VmHWM, in MB: the
interpreter, numpy, onnxruntime, tokenizers, the encoder's module, the ONNX session (the options of
`encoder.Model`, changed by the variant), the tokenizer, a first encode, 128 of the longest real entries
(the encode's time, best of 3), malloc_trim (`encoder.release_freed_memory`), the same 128 again.

Variants (onnxruntime.SessionOptions): default (as `encoder.Model`), no-arena (enable_cpu_mem_arena off),
no-mem-pattern (enable_mem_pattern off), neither (both off), no-optimization (graph_optimization_level
ORT_DISABLE_ALL: the int8 weights are not made float once at load, but at every run). Each variant runs
in a fresh process, in the order given.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("default", "no-arena", "no-mem-pattern", "neither", "no-optimization")


def memory() -> str:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            fields[name] = int(value.split()[0]) >> 10
    return (f"RSS {fields['VmRSS']:4d}  anon {fields['RssAnon']:4d}  file {fields['RssFile']:3d}  "
            f"peak {fields['VmHWM']:4d} MB")


def parts(variant: str) -> None:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # as the encoder runs (encoder._one_blas_thread)
    stages = [("interpreter", memory())]
    import numpy

    stages.append(("numpy", memory()))
    import onnxruntime

    stages.append(("onnxruntime", memory()))
    from tokenizers import Tokenizer

    stages.append(("tokenizers", memory()))
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "scripts"))
    from harnesslink_core.recall import encoder

    stages.append(("the encoder's module", memory()))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = min(2, os.cpu_count() or 1)
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if variant in ("no-arena", "neither"):
        options.enable_cpu_mem_arena = False
    if variant in ("no-mem-pattern", "neither"):
        options.enable_mem_pattern = False
    if variant == "no-optimization":
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(str(encoder.DATA / "model.onnx"), options,
                                           providers=["CPUExecutionProvider"])
    stages.append(("the session", memory()))
    tokenizer = Tokenizer.from_file(str(encoder.DATA / "tokenizer.json"))
    tokenizer.no_padding()
    stages.append(("the tokenizer", memory()))

    def encode(texts: list[str]) -> None:
        for piece in tokenizer.encode_batch(texts):
            ids = numpy.array([piece.ids], dtype=numpy.int64)
            session.run(None, {"input_ids": ids, "attention_mask": numpy.ones_like(ids)})

    encode(["why did signing in stop working right after 12am? something with the session cookie"])
    stages.append(("a first encode", memory()))
    from build_encoder import real_texts

    longest = sorted(real_texts(), key=len)[-128:]
    taken = min(timeit.repeat(lambda: encode(longest), number=1, repeat=3))
    stages.append((f"128 long entries, {taken:.2f} s", memory()))
    encoder.release_freed_memory()
    stages.append(("malloc_trim", memory()))
    taken = min(timeit.repeat(lambda: encode(longest), number=1, repeat=3))
    stages.append((f"the 128 again, {taken:.2f} s", memory()))
    for name, figures in stages:
        print(f"{variant:15s} {name:28s} {figures}")
    print(f"{variant:15s} load {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="all of them by default")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process of one variant
    args = parser.parse_args(argv)
    if args.one:
        parts(args.one)
        return 0
    for variant in args.variant or VARIANTS:
        subprocess.run([sys.executable, __file__, "--one", variant], check=True, cwd=ROOT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
