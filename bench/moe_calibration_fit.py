#!/usr/bin/env python3
"""Fit XLA:TPU's grouped-matmul efficiency to published dropless-MoE runs; cross-validate by model.

A dropless MoE runs its experts as grouped-matmul kernels (MaxText's megablox and tokamax gmm, or
JAX's ragged dot) rather than as XLA's dots. The estimate already counts what those kernels do
that a dot does not — they re-read their operands tile by tile (`grouped_tile_rows`,
`grouped_tile_cols`) — and `grouped_matmul_efficiency` is what remains: the share of the
generation's `matrix_efficiency` the kernels reach. It is fitted here, per generation with MoE
runs, on the bf16 rows of bench/published_validate.py marked `grouped` (fp8 rows are checks: they
also depend on the fp8 rate), predicting with `tpu-doctor estimate --calibration FILE` (the
family's factors with the generation's fitted ones laid over them, one factor changed).

Leave-one-model-out: each MoE model's rows (bf16 and fp8) are predicted with the factor fitted to
the other models' bf16 rows of its generation. Leave-one-generation-out: each generation's rows are
predicted with the factor fitted to the other generations' bf16 rows (what a generation without
MoE runs inherits). The median |error| over those predictions is the cross-validated figure; the
in-sample fit is printed for reference only.

    python3 bench/moe_calibration_fit.py [--write]   # --write: data/calibration/xla-tpu-GEN.json
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_validate as pv  # noqa: E402
import tpu_calibration_fit as tcf  # noqa: E402

FACTOR = "grouped_matmul_efficiency"
GRID = [round(0.20 + 0.01 * i, 2) for i in range(81)]  # 0.20 .. 1.00


def moe_rows(csv_path):
    rows = []
    for row in csv.DictReader(open(csv_path)):
        spec = next((s for s in pv.ROWS if pv.row_matches(row, s)), None)
        if spec and spec.get("grouped"):
            rows.append({"row": row, "spec": spec, "gen": tcf.target_name(spec),
                         "model": spec["model"], "fp8": spec.get("precision") == "fp8",
                         "published": float(row["throughput"].replace(",", ""))})
    return rows


def generation_base(gen):
    """The family's calibration with the generation's own fitted factors laid over it."""
    directory = os.path.join(pv.ROOT, "data", "calibration")
    base = json.load(open(os.path.join(directory, "xla-tpu.json")))
    path = os.path.join(directory, f"xla-{gen}.json")
    if os.path.exists(path):
        own = json.load(open(path))
        base.update({k: v for k, v in own.items()
                     if k not in ("family", "fitted_for", "source", FACTOR)})
    return base


def fit(predictor, rows):
    """The grid value with the least sum of |log error| over `rows` (throughput rises with it)."""
    return min(GRID, key=lambda v: sum(abs(e) for e in predictor.log_errors(rows, FACTOR, v)))


def summary(label, errors):
    print(f"{label}: {len(errors)} rows, median |error| {statistics.median(errors):.1%}, "
          f"within 20%: {sum(e <= 0.20 for e in errors)}/{len(errors)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(pv.ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=os.path.join(pv.ROOT, "bench", "data", "published_results.csv"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--write", action="store_true",
                    help="write each generation's fitted factor to data/calibration/")
    args = ap.parse_args()
    by_gen = {}
    for r in moe_rows(args.csv):
        by_gen.setdefault(r["gen"], []).append(r)
    fitted = {}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        # One predictor per generation (its own base factors, its own folder of calibration
        # files), kept for both cross-validations: a prediction made once is reused.
        predictors = {}
        for gen in by_gen:
            os.makedirs(os.path.join(tmp, gen))
            predictors[gen] = tcf.Predictor(args.binary, generation_base(gen),
                                            os.path.join(tmp, gen), pool)
        for gen, rows in sorted(by_gen.items()):
            p = predictors[gen]
            train = [r for r in rows if not r["fp8"]]
            fitted[gen] = fit(p, train)
            errs = p.log_errors(rows, FACTOR, fitted[gen])
            print(f"{gen}: {FACTOR} {fitted[gen]:.2f} fitted to {len(train)} bf16 rows "
                  f"(in-sample, not evidence):")
            for r, e in zip(rows, errs):
                print(f"  {r['row']['model'][:18]:<18} {r['row']['hardware'][:26]:<26} "
                      f"{r['row']['precision']:<5} {math.expm1(e):+6.1%}")
            print(f"{gen}: leave-one-model-out (each model predicted with the factor fitted to the "
                  "others' bf16 rows):")
            held_out = []
            for model in sorted({r["model"] for r in rows}):
                others = [r for r in train if r["model"] != model]
                if not others:
                    continue
                value = fit(p, others)
                mine = [r for r in rows if r["model"] == model]
                for r, e in zip(mine, p.log_errors(mine, FACTOR, value)):
                    held_out.append(abs(math.expm1(e)))
                    print(f"  {model:<28} {value:.2f}  {r['row']['hardware'][:26]:<26} "
                          f"{r['row']['precision']:<5} {math.expm1(e):+6.1%}")
            if held_out:
                summary(f"{gen}: leave-one-model-out", held_out)
        if len(by_gen) > 1:
            print("leave-one-generation-out (each generation predicted with the factor fitted to "
                  "the other generations' bf16 rows):")
            held_out = []
            for gen, rows in sorted(by_gen.items()):
                # The other generations' bf16 rows, each predicted with its own base factors.
                others = {g: [r for r in rs if not r["fp8"]] for g, rs in by_gen.items() if g != gen}
                value = min(GRID, key=lambda v: sum(
                    abs(e) for g, rs in others.items()
                    for e in predictors[g].log_errors(rs, FACTOR, v)))
                for r, e in zip(rows, predictors[gen].log_errors(rows, FACTOR, value)):
                    held_out.append(abs(math.expm1(e)))
                    print(f"  {gen:<8} {value:.2f}  {r['row']['model'][:18]:<18} "
                          f"{r['row']['hardware'][:26]:<26} {r['row']['precision']:<5} "
                          f"{math.expm1(e):+6.1%}")
            summary("leave-one-generation-out", held_out)
    if args.write:
        write(fitted, by_gen)


def write(fitted, by_gen):
    for gen, value in fitted.items():
        runs = sorted({f"{r['row']['model']} on {r['row']['hardware']}"
                       for r in by_gen[gen] if not r["fp8"]})
        tcf.update_generation_file(
            gen, {FACTOR: value}, FACTOR + ":",
            f"{FACTOR}: bench/moe_calibration_fit.py on {len(runs)} bf16 dropless-MoE run(s) of "
            f"bench/data/published_results.csv: " + "; ".join(runs), first=False)


if __name__ == "__main__":
    main()
