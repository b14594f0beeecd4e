#!/usr/bin/env python3
"""Fit XLA:TPU's efficiency factors per TPU generation to published runs; cross-validate by
generation.

The TPU rows of bench/published_validate.py are predicted with `tpu-doctor estimate --calibration
FILE` (the family file data/calibration/xla-tpu.json with one factor changed). For each generation
with rows, the factor its rows depend on is fitted to them:

- `matrix_efficiency` on the LLM runs (tokens/s per chip): the share of the MXU's peak a matmul
  reaches, in hardware-FLOP terms — the backward pass's two matmuls per forward one and the
  recompute of rematerialisation are counted as work by the estimate, not folded into the factor.

The convolutional runs (ResNet-50, images/s) fit nothing: XLA:TPU's convolutions take their
generation's matmul factor (data/calibration/xla-tpu.json has no conv_efficiency), so each is
predicted with the factor the LLM runs gave its generation or its nearest sibling — a prediction
of a kind of run no fit saw, listed with the held-out rows.

The fit minimises the sum of |log(predicted / published)| over the generation's rows (a grid of
0.005). Leave-one-generation-out: each generation's rows are predicted with the factor of its
nearest sibling that has one (the order of `calibration_siblings` in data/targets/, which is what
`tpu-doctor` itself falls back to for a generation with no fitted runs), fitted without it. The
median |error| over the held-out rows is the cross-validated figure; in-sample errors are printed
for reference only.

    python3 bench/tpu_calibration_fit.py [--write]   # --write: data/calibration/xla-tpu-*.json
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

GRID = [round(0.30 + 0.005 * i, 3) for i in range(141)]  # 0.30 .. 1.00: a share of the peak
FACTOR = {"tokens/chip": "matrix_efficiency", "tflops/chip": "matrix_efficiency",
          "samples": "matrix_efficiency"}


def is_conv(row):
    """A convolutional run (images/s): it checks its generation's matmul factor, fits nothing."""
    return row["spec"]["per"] == "samples"


def fitted_rows(group):
    """The rows a factor is fitted to: the LLM runs."""
    return [r for r in group if not is_conv(r)]


def fit_groups(p, groups):
    """Each (generation, factor) with runs to fit, fitted."""
    return {key: p.fit(fitted_rows(group), key[1]) for key, group in sorted(groups.items())
            if fitted_rows(group)}


def target_name(spec):
    name, _, size = spec["target"].rpartition("-")
    name = name if size.isdigit() else spec["target"]
    return "tpu-7x" if name == "tpu7x" else name


def siblings(target):
    path = os.path.join(pv.ROOT, "data", "targets", target + ".json")
    return json.load(open(path)).get("calibration_siblings", [])


def tpu_rows(csv_path):
    rows = []
    for row in csv.DictReader(open(csv_path)):
        spec = next((s for s in pv.ROWS if pv.row_matches(row, s)), None)
        # Training runs only: the serving rows check the serving model, fitted to nothing.
        # (fp8 and int8 runs check the 8-bit rate with the bf16 factor: not fitted either.)
        # Rows held out when they were added (`held_out`) stay out of the fit.
        if (spec and spec["target"].startswith("tpu") and spec["per"] in FACTOR and
                spec.get("precision") not in ("fp8", "int8") and not spec.get("held_out")):
            rows.append(dict(row=row, spec=spec, gen=target_name(spec), factor=FACTOR[spec["per"]],
                             published=float(row["throughput"].replace(",", ""))))
    return rows


def family():
    """The XLA:TPU family's factors, which a generation's fit replaces one at a time."""
    return json.load(open(os.path.join(pv.ROOT, "data", "calibration", "xla-tpu.json")))


def factor_groups(csv_path):
    """The TPU rows by (generation, factor they depend on)."""
    groups = {}
    for r in tpu_rows(csv_path):
        groups.setdefault((r["gen"], r["factor"]), []).append(r)
    return groups


class Predictor:
    def __init__(self, binary, base, directory, pool):
        self.binary, self.base, self.dir, self.pool = binary, base, directory, pool
        self.cache = {}

    def log_errors(self, rows, factor, value):
        cal = dict(self.base, **{factor: value})
        path = os.path.join(self.dir, f"{factor}_{value}.json")
        with open(path, "w") as f:
            json.dump(cal, f)

        def one(r):
            key = (id(r), factor, value)
            if key not in self.cache:
                self.cache[key] = math.log(pv.predict(self.binary, r["spec"], path)[0] /
                                           r["published"])
            return self.cache[key]
        return list(self.pool.map(one, rows))

    def fit(self, rows, factor):
        # The throughput rises with the factor: bisect the grid on the median log error.
        lo, hi = 0, len(GRID) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if statistics.median(self.log_errors(rows, factor, GRID[mid])) < 0:
                lo = mid + 1
            else:
                hi = mid
        best = min(range(max(0, lo - 3), min(len(GRID), lo + 4)),
                   key=lambda i: sum(abs(e) for e in self.log_errors(rows, factor, GRID[i])))
        return GRID[best]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(pv.ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=os.path.join(pv.ROOT, "bench", "data", "published_results.csv"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--write", action="store_true",
                    help="write each generation's fitted factors to data/calibration/")
    args = ap.parse_args()
    base = family()
    groups = factor_groups(args.csv)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        p = Predictor(args.binary, base, tmp, pool)
        fitted = fit_groups(p, groups)
        print("fitted per generation (in-sample, not evidence):")
        for (gen, factor), value in fitted.items():
            errs = p.log_errors(fitted_rows(groups[(gen, factor)]), factor, value)
            print(f"  {gen:<8} {factor:<18} {value:.3f}  {len(errs)} rows, median |error| "
                  f"{statistics.median(abs(math.expm1(e)) for e in errs):.1%}" +
                  ("  (at the bound: the estimate's other terms are too slow)"
                   if value == GRID[-1] else ""))
        print("leave-one-generation-out (each generation predicted with its nearest sibling's "
              "factor):")
        held_out, per_gen = leave_one_generation_out(p, groups, fitted, base)
        print("leave-one-generation-out per generation (a generation with many runs weighs more "
              "in the overall median):")
        for gen, errs in sorted(per_gen.items()):
            print(f"  {gen:<8} {len(errs):>2} rows, median |error| {statistics.median(errs):.1%}, "
                  f"worst {max(errs):.1%}")
        print(f"leave-one-generation-out: {len(held_out)} rows, median |error| "
              f"{statistics.median(held_out):.1%}, within 20%: "
              f"{sum(e <= 0.20 for e in held_out)}/{len(held_out)}")
        if args.write:
            write(fitted, groups)


def leave_one_generation_out(p, groups, fitted, base):
    """Each generation's rows predicted with its nearest fitted sibling's factor (else the
    family's), printed; returns every row's |error| and the errors by generation."""
    held_out, per_gen = [], {}
    for (gen, factor), group in sorted(groups.items()):
        # A generation's convolutional runs are predicted as the tool predicts them: with its own
        # fitted factor if its LLM runs gave it one (which they did not see), else a sibling's.
        convs = [r for r in group if is_conv(r)]
        if convs and (gen, factor) in fitted:
            for r, e in zip(convs, p.log_errors(convs, factor, fitted[(gen, factor)])):
                held_out.append(abs(math.expm1(e)))
                per_gen.setdefault(gen, []).append(abs(math.expm1(e)))
            group = fitted_rows(group)
        donor = next((s for s in siblings(gen) if (s, factor) in fitted), None)
        value = fitted[(donor, factor)] if donor else base[factor]
        for r, e in zip(group, p.log_errors(group, factor, value)):
            held_out.append(abs(math.expm1(e)))
            per_gen.setdefault(gen, []).append(abs(math.expm1(e)))
            print(f"  {gen:<8} from {donor or 'family':<8} {factor:<18} {value:.3f}  "
                  f"{r['row']['model'][:16]:<16} {r['row']['hardware'][:26]:<26} "
                  f"{math.expm1(e):+6.1%}")
    return held_out, per_gen


def fit_and_hold_out(binary, csv_path, jobs):
    """The TPU generations' fits and their leave-one-generation-out |errors| (for
    bench/logo_all.py)."""
    base, groups = family(), factor_groups(csv_path)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(jobs) as pool:
        p = Predictor(binary, base, tmp, pool)
        fitted = fit_groups(p, groups)
        return leave_one_generation_out(p, groups, fitted, base)


def write(fitted, groups):
    by_gen = {}
    for (gen, factor), value in fitted.items():
        if value == GRID[-1]:
            # A factor at the bound says the estimate's other terms are wrong for these runs, not
            # that the chip reaches its peak: the family's factor stays.
            print(f"not written: {gen} {factor} (at the bound)")
            continue
        by_gen.setdefault(gen, {})[factor] = value
    for gen, factors in by_gen.items():
        runs = sorted({f"{r['row']['model']} on {r['row']['hardware']}"
                       for key, group in groups.items() if key[0] == gen
                       for r in fitted_rows(group)})
        update_generation_file(
            gen, factors, "bench/tpu_calibration_fit.py",
            f"bench/tpu_calibration_fit.py on {len(runs)} published run(s) of "
            f"bench/data/published_results.csv: " + "; ".join(runs), first=True)


def update_generation_file(gen, factors, owner, note, first):
    """Lays `factors` over data/calibration/xla-GEN.json and puts `note` in place of the part of
    its source that starts with `owner` (first or last of the parts, joined by " | "): the factors
    another fit wrote stay, with their part."""
    path = os.path.join(pv.ROOT, "data", "calibration", f"xla-{gen}.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    kept = [part for part in doc.get("source", "").split(" | ")
            if part and not part.startswith(owner)]
    doc.update({"family": "xla-tpu", "fitted_for": gen, **factors})
    doc["source"] = " | ".join([note] + kept if first else kept + [note])
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print("wrote", os.path.relpath(path, pv.ROOT))


if __name__ == "__main__":
    main()
