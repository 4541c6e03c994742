"""The encoder's graph and run options side by side, in-process and interleaved:

    python benchmarks/encoder_variants.py --rounds 10 MODEL[:THREADS[:IN_FLIGHT[:dnz]]] ...

Each variant is an onnxruntime session (THREADS intra-op threads, spinning off; `dnz`: denormals as zero)
running the real entry texts (benchmarks/encoder.py's: tests/fixtures/real, repeated to 128) one text a run,
unpadded, IN_FLIGHT at once from as many Python threads, as recall/encoder.py's `Model` does. The variants
take turns, the order reversed every other round. Printed for each: entries per second (min/median/max), entries
per second of this process's CPU (on a loaded machine the wall-clock rate is the share of the cores it got,
this one is not), both as ratios to the first variant, and its vectors against the first's (least cosine, and
whether they are the same to the bit). `MODEL` `shipped` is the one in harnesslink_core/data/encoder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

SHIPPED = ROOT / "harnesslink_core" / "data" / "encoder"


def session(path: str, threads: int, denormals_as_zero: bool):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if denormals_as_zero:
        options.add_session_config_entry("session.set_denormal_as_zero", "1")
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def encode(run, pieces, in_flight: int):
    import numpy as np

    out = np.zeros((len(pieces), 384), dtype=np.float32)
    rows = iter(range(len(pieces)))

    def run_rows() -> None:
        for row in rows:
            ids = np.array([pieces[row].ids], dtype=np.int64)
            out[row] = run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]

    threads = [threading.Thread(target=run_rows) for _ in range(in_flight - 1)]
    for thread in threads:
        thread.start()
    run_rows()
    for thread in threads:
        thread.join()
    return out


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    from build_encoder import real_texts
    from tokenizers import Tokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("variants", nargs="+", help="MODEL[:THREADS[:IN_FLIGHT[:dnz]]]; MODEL shipped is data/encoder's")
    args = parser.parse_args(argv)

    tokenizer = Tokenizer.from_file(str(SHIPPED / "tokenizer.json"))
    tokenizer.no_padding()
    texts = real_texts()
    batch = (texts * (128 // len(texts) + 1))[:128]
    variants = []
    for spec in args.variants:
        path, threads, in_flight, flag = (spec.split(":") + ["2", "1", ""])[:4]
        path = str(SHIPPED / "model.onnx") if path == "shipped" else path
        ses = session(path, int(threads), flag == "dnz")
        encode(ses.run, tokenizer.encode_batch(texts[:2]), 1)  # the first run sets up the buffers
        variants.append((spec, ses, int(in_flight)))
    wall: dict[str, list[float]] = {spec: [] for spec in args.variants}
    cpu: dict[str, list[float]] = {spec: [] for spec in args.variants}
    vectors = {}
    print(f"load before {os.getloadavg()[0]:.2f}")
    for turn in range(args.rounds):
        for spec, ses, in_flight in variants if turn % 2 == 0 else variants[::-1]:
            started, spent = time.perf_counter(), time.process_time()
            vectors[spec] = encode(ses.run, tokenizer.encode_batch(batch), in_flight)
            wall[spec].append(len(batch) / (time.perf_counter() - started))
            cpu[spec].append(len(batch) / (time.process_time() - spent))
    first = args.variants[0]
    for spec in args.variants:
        cosines = (vectors[first] * vectors[spec]).sum(axis=1)
        print(f"{spec}: entries/s {min(wall[spec]):.1f} / {statistics.median(wall[spec]):.1f} / {max(wall[spec]):.1f}"
              f" ({statistics.median(wall[spec]) / statistics.median(wall[first]):.2f}),"
              f" per CPU-second {statistics.median(cpu[spec]):.1f}"
              f" ({statistics.median(cpu[spec]) / statistics.median(cpu[first]):.2f}),"
              f" least cosine to the first {cosines.min():.7f}, same bits {np.array_equal(vectors[first], vectors[spec])}")
    print(f"load after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
