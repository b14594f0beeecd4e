#!/usr/bin/env python3
"""Fit GPU convolutions' channels-last efficiency to published runs; cross-validate by generation.

`estimate --channels-last` costs a GPU's convolutions as cuDNN runs them in NHWC: implicit GEMMs
on the tensor cores at the precision's rate times `channels_last_conv_efficiency` (the runs the
other factors were fitted to were NCHW). The published runs that used NHWC are the rows of
bench/published_validate.py marked `channels_last` and run eagerly (NVIDIA DeepLearningExamples'
ResNet-50 v1.5 with AMP and `--memory-format nhwc`, on A100 and V100): the factor is fitted to
them with `estimate --calibration FILE` (data/calibration/eager-gpu.json with the factor set),
minimising the sum of |log(predicted / published)| over a grid of 0.005.

Leave-one-generation-out: each GPU generation's rows are predicted with the factor fitted to the
other generation's; the median |error| over those held-out rows is the cross-validated figure.
Rows marked with another runtime are predicted with the factor fitted to all eager rows, as a
check of its transfer across runtimes, and never fitted; rows of other sources (the Flax example)
are never fitted either: only NVIDIA's runs are, which say how they ran.

    python3 bench/channels_last_fit.py [--write]   # --write: the factor into the GPU calibrations
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_validate as pv  # noqa: E402

FACTOR = "channels_last_conv_efficiency"
GRID = [round(0.05 + 0.005 * i, 3) for i in range(191)]  # 0.05 .. 1.00
CALIBRATIONS = ("eager-gpu", "compiled-gpu", "xla-gpu")
WRITING = threading.Lock()


def generation(spec):
    return "nvidia-a100" if "a100" in spec["target"] else "nvidia-v100"


def nhwc_rows(csv_path):
    rows = []
    for row in csv.DictReader(open(csv_path)):
        spec = next((s for s in pv.ROWS if pv.row_matches(row, s)), None)
        if spec and spec.get("channels_last"):
            rows.append(dict(row=row, spec=spec, gen=generation(spec),
                             eager=spec.get("runtime", "eager") == "eager" and "source" not in spec,
                             published=float(row["throughput"].replace(",", ""))))
    return rows


def calibration_path(directory, name, value):
    # Written once per value, before any estimate reads it (the pool's threads share the files).
    path = os.path.join(directory, f"{name}_{value}.json")
    with WRITING:
        if not os.path.exists(path):
            cal = json.load(open(os.path.join(pv.ROOT, "data", "calibration", name + ".json")))
            cal[FACTOR] = value
            with open(path + ".tmp", "w") as f:
                json.dump(cal, f)
            os.replace(path + ".tmp", path)
    return path


def log_errors(binary, directory, pool, rows, value):
    def one(r):
        name = "xla-gpu" if r["spec"].get("runtime") == "xla" else "eager-gpu"
        predicted = pv.predict(binary, r["spec"], calibration_path(directory, name, value))[0]
        return math.log(predicted / r["published"])
    return list(pool.map(one, rows))


def fit(binary, directory, pool, rows):
    return min(GRID, key=lambda v: sum(abs(e) for e in log_errors(binary, directory, pool, rows, v)))


def label(r):
    return f"{r['row']['model'][:16]:<16} {r['row']['hardware'][:28]:<28}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(pv.ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=os.path.join(pv.ROOT, "bench", "data", "published_results.csv"))
    ap.add_argument("--write", action="store_true",
                    help="write the factor fitted to every eager row into the GPU calibrations")
    args = ap.parse_args()
    rows = nhwc_rows(args.csv)
    eager = [r for r in rows if r["eager"]]
    gens = sorted({r["gen"] for r in eager})
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        every = fit(args.binary, tmp, pool, eager)
        print(f"fitted to all {len(eager)} eager rows (in-sample, not evidence): {FACTOR} {every:.3f}")
        for r, e in zip(eager, log_errors(args.binary, tmp, pool, eager, every)):
            print(f"  {label(r)} {math.expm1(e):+6.1%}")
        print("leave-one-generation-out (each generation predicted with the other's factor):")
        held_out = []
        for gen in gens:
            others = [r for r in eager if r["gen"] != gen]
            mine = [r for r in eager if r["gen"] == gen]
            value = fit(args.binary, tmp, pool, others)
            for r, e in zip(mine, log_errors(args.binary, tmp, pool, mine, value)):
                held_out.append(abs(math.expm1(e)))
                print(f"  {gen:<12} from the others' {value:.3f}  {label(r)} {math.expm1(e):+6.1%}")
        print(f"leave-one-generation-out: {len(held_out)} rows, median |error| "
              f"{statistics.median(held_out):.1%}, worst {max(held_out):.1%}")
        other_runtimes = [r for r in rows if not r["eager"]]
        if other_runtimes:
            print(f"other sources, with the factor fitted to NVIDIA's eager rows ({every:.3f}), "
                  "not fitted:")
            for r, e in zip(other_runtimes, log_errors(args.binary, tmp, pool, other_runtimes, every)):
                print(f"  {r['spec'].get('runtime', 'eager'):<6} {label(r)} {math.expm1(e):+6.1%}")
    if args.write:
        write(every, eager)


def write(value, rows):
    runs = "; ".join(sorted({f"{r['row']['model']} {r['row']['precision']} on {r['row']['hardware']}"
                             for r in rows}))
    for name in CALIBRATIONS:
        path = os.path.join(pv.ROOT, "data", "calibration", name + ".json")
        cal = json.load(open(path))
        cal[FACTOR] = value
        note = (f"channels-last convolutions: {FACTOR} fitted by bench/channels_last_fit.py to "
                f"{len(rows)} published NHWC runs ({runs})")
        source = cal["source"].split("; channels-last convolutions:")[0]
        cal["source"] = source + "; " + note
        with open(path, "w") as f:
            json.dump(cal, f, indent=2)
            f.write("\n")
        print("wrote", os.path.relpath(path, pv.ROOT))


if __name__ == "__main__":
    main()
