#!/usr/bin/env python3
"""Fit the GPU matmul factor per GPU generation to published whole-step training runs; check it
by leaving one source out and print leave-one-generation-out.

The eager GPU family (data/calibration/eager-gpu.json) is the H100's: its matmul efficiency is
the card's measured ceiling (bench/h100_validate.py --fit). A generation whose published runs say
otherwise gets its own `matrix_efficiency` (data/calibration/eager-GEN.json, laid over the family
by `tpu-doctor` for that generation and its calibration siblings), fitted here the way
bench/tpu_calibration_fit.py fits TPU generations: in hardware-FLOP terms, the backward pass,
recompute, pipeline bubbles, collectives and the fp8 rate (the target's fp8_matmul_share)
counted by the estimate, not folded into the factor. Only dense LLM training runs are fitted
(mixture-of-experts runs depend on grouped matmuls and dispatch that this factor does not
describe); the H100 is not fitted (its factor is measured, and its published runs are the
family's out-of-sample check), nor is a generation whose runs come from a single publication (its
fit could not be checked by leaving one out: the GB200's inherit the B200's factor, their
calibration sibling, and check it).

Printed, and which figure is evidence:
- in sample per generation (not evidence);
- leave-one-source-out (a generation's rows from one publication predicted with the factor
  fitted to its other publications' rows): the cross-validated figure for a fitted generation;
- leave-one-generation-out (each generation predicted with what it would get if it had no rows:
  its nearest sibling's fitted factor, else the family's).

    python3 bench/gpu_calibration_fit.py [--write]   # --write: data/calibration/eager-*.json
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

FAMILY = "eager-gpu"
MEASURED = "nvidia-h100"  # the family's own generation: its factor is a measurement
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


def is_moe(spec):
    path = os.path.join(pv.CONFIGS, spec["model"])
    if not path.endswith(".json"):
        return False
    config = json.load(open(path))
    return any(config.get(k) for k in EXPERT_KEYS)


def source(row):
    """The publication a row comes from: its URL's page (tables of one release share it)."""
    return row["source"].split("#")[0]


def gpu_rows(csv_path):
    rows = []
    for row in csv.DictReader(open(csv_path)):
        spec = next((s for s in pv.ROWS if pv.row_matches(row, s)), None)
        # Rows held out when they were added (`held_out`) stay out of every fit, as in
        # tpu_calibration_fit.py.
        if (spec and spec["target"].startswith("nvidia") and spec["per"] == "tokens/chip" and
                not is_moe(spec) and not spec.get("held_out")):
            rows.append(dict(row=row, spec=spec, gen=tcf.target_name(spec),
                             factor="matrix_efficiency", source=source(row),
                             published=float(row["throughput"].replace(",", ""))))
    return rows


def family():
    """The eager GPU family's factors (the H100's measured ones)."""
    return json.load(open(os.path.join(pv.ROOT, "data", "calibration", FAMILY + ".json")))


def generation_groups(csv_path):
    """The dense GPU training rows by generation."""
    by_gen = {}
    for r in gpu_rows(csv_path):
        by_gen.setdefault(r["gen"], []).append(r)
    return by_gen


def abs_errors(log_errors):
    return [abs(math.expm1(e)) for e in log_errors]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(pv.ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=os.path.join(pv.ROOT, "bench", "data", "published_results.csv"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--write", action="store_true",
                    help="write each fitted generation's factor to data/calibration/eager-GEN.json")
    args = ap.parse_args()
    base, by_gen = family(), generation_groups(args.csv)
    factor = "matrix_efficiency"
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        p = tcf.Predictor(args.binary, base, tmp, pool)
        fitted = fitted_generations(p, by_gen)
        print(f"fitted per generation (in-sample, not evidence; {MEASURED} keeps the family's "
              f"measured {base[factor]}):")
        for gen, value in fitted.items():
            errs = abs_errors(p.log_errors(by_gen[gen], factor, value))
            print(f"  {gen:<12} {factor} {value:.3f}  {len(errs)} rows, median |error| "
                  f"{statistics.median(errs):.1%}")
        print("leave-one-source-out (each publication's rows predicted with the factor fitted to "
              "the generation's other publications):")
        loso = []
        for gen in fitted:
            sources = sorted({r["source"] for r in by_gen[gen]})
            for held in sources:
                train = [r for r in by_gen[gen] if r["source"] != held]
                test = [r for r in by_gen[gen] if r["source"] == held]
                if not train:
                    print(f"  {gen:<12} one publication only: nothing to hold out")
                    continue
                value = p.fit(train, factor)
                for r, e in zip(test, p.log_errors(test, factor, value)):
                    loso.append(abs(math.expm1(e)))
                    print(f"  {gen:<12} {value:.3f}  {r['row']['model'][:30]:<30} "
                          f"{r['row']['hardware'][:24]:<24} {math.expm1(e):+6.1%}")
        if loso:
            print(f"leave-one-source-out: {len(loso)} rows, median |error| "
                  f"{statistics.median(loso):.1%}, within 20%: {sum(e <= 0.2 for e in loso)}/"
                  f"{len(loso)}")
        print("leave-one-generation-out (each generation with its nearest fitted sibling's "
              "factor, else the family's):")
        logo = leave_one_generation_out(p, by_gen, fitted, base)
        print(f"leave-one-generation-out: {len(logo)} rows, median |error| "
              f"{statistics.median(logo):.1%}, within 20%: {sum(e <= 0.2 for e in logo)}/"
              f"{len(logo)}")
        if args.write:
            for gen, value in fitted.items():
                write(gen, value, by_gen[gen])


def leave_one_generation_out(p, by_gen, fitted, base):
    """Each generation's rows predicted with its nearest fitted sibling's factor, else the
    family's; prints a line a generation and returns every row's |error|."""
    logo = []
    for gen, group in sorted(by_gen.items()):
        donor = next((s for s in tcf.siblings(gen) if s in fitted), None)
        value = fitted[donor] if donor else base["matrix_efficiency"]
        errs = abs_errors(p.log_errors(group, "matrix_efficiency", value))
        logo += errs
        print(f"  {gen:<12} from {donor or 'family':<12} {value:.3f}  {len(errs)} rows, "
              f"median |error| {statistics.median(errs):.1%}, worst {max(errs):.1%}")
    return logo


def fitted_generations(p, by_gen):
    """The factor of each generation with runs from two publications or more, the H100 aside."""
    return {gen: p.fit(group, "matrix_efficiency") for gen, group in sorted(by_gen.items())
            if gen != MEASURED and len({r["source"] for r in group}) >= 2}


def fit_and_hold_out(binary, csv_path, jobs):
    """The GPU generations' leave-one-generation-out |errors| (for bench/logo_all.py)."""
    base, by_gen = family(), generation_groups(csv_path)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(jobs) as pool:
        p = tcf.Predictor(binary, base, tmp, pool)
        return leave_one_generation_out(p, by_gen, fitted_generations(p, by_gen), base)


def write(gen, value, rows):
    runs = sorted(f"{r['row']['model']} on {r['row']['hardware']}" for r in rows)
    path = os.path.join(pv.ROOT, "data", "calibration", f"eager-{gen}.json")
    doc = {"family": FAMILY, "fitted_for": gen, "matrix_efficiency": value,
           "source": f"bench/gpu_calibration_fit.py on {len(runs)} published dense training "
                     f"run(s) of bench/data/published_results.csv: " + "; ".join(runs)}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print("wrote", os.path.relpath(path, pv.ROOT))


if __name__ == "__main__":
    main()
