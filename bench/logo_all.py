#!/usr/bin/env python3
"""Leave-one-generation-out over every generation with published dense training runs, TPU and
GPU together: each generation's runs predicted with the factor it would have if it had none (its
nearest fitted sibling's, else its family's), by bench/tpu_calibration_fit.py and
bench/gpu_calibration_fit.py. The median |error| over all those rows is the cross-validated
figure issue 23 asks for (at most 20%).

    python3 bench/logo_all.py [--binary build/tpu-doctor]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_calibration_fit as gcf  # noqa: E402
import published_validate as pv  # noqa: E402
import tpu_calibration_fit as tcf  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(pv.ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=os.path.join(pv.ROOT, "bench", "data", "published_results.csv"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    print("TPU generations:")
    tpu, _ = tcf.fit_and_hold_out(args.binary, args.csv, args.jobs)
    print("GPU generations:")
    gpu = gcf.fit_and_hold_out(args.binary, args.csv, args.jobs)
    for name, errs in (("TPU", tpu), ("GPU", gpu), ("all", tpu + gpu)):
        print(f"leave-one-generation-out, {name}: {len(errs)} rows, median |error| "
              f"{statistics.median(errs):.1%}, within 20%: {sum(e <= 0.2 for e in errs)}/"
              f"{len(errs)}")


if __name__ == "__main__":
    main()
