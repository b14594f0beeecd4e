#!/usr/bin/env python3
"""Training throughput of MLPerf Training's ResNet-50 results, from their MLLOG result files.

    python3 bench/mlperf_resnet_extract.py 0.7=PATH 1.0=PATH ... > bench/data/mlperf_training_resnet.csv

Each PATH is a checkout or bare mirror of github.com/mlcommons/training_results_v{ROUND} (read
as bench/mlperf_training_extract.py reads them). For every `{org}/results/{system}/resnet`
directory it reads each run's `result_N.txt` and its system description
(`{org}/systems/{system}.json`) and prints one row: the global batch the log states, the
accelerators (nodes x accelerators a node), the accelerator and framework the description
names, and the median over the runs of each run's training images a second.

A run's images a second: every block after the first (the first holds the compilation and the
data pipeline's warm-up) trains `epoch_count` epochs of `train_samples` images; its time is
the block's (block_start to block_stop) less the evaluations timed inside it (eval_start to
eval_stop). Logs that evaluate outside their blocks (Google's TPU runs) need nothing taken
off. bench/mlperf_resnet_validate.py predicts the rows.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlperf_training_extract import SOURCE, events, lister  # noqa: E402

BENCHMARK = "resnet"


def images_per_s(text):
    """(global batch, images a second over the blocks after the first) of one run, or None."""
    ev = events(text)
    point = {e["key"]: e["value"] for e in ev if e.get("event_type", "POINT_IN_TIME") ==
             "POINT_IN_TIME" and e["key"] in ("global_batch_size", "train_samples")}
    if "global_batch_size" not in point or "train_samples" not in point:
        return None
    blocks, opened, evals, eval_opened = [], None, 0.0, None
    for e in ev:
        key, t = e["key"], e["time_ms"]
        if key == "block_start":
            opened, evals = (t, e["metadata"].get("epoch_count")), 0.0
        elif key == "eval_start" and opened is not None:
            eval_opened = t
        elif key == "eval_stop" and eval_opened is not None:
            evals += t - eval_opened
            eval_opened = None
        elif key == "block_stop" and opened is not None:
            if opened[1]:
                blocks.append((float(opened[1]), (t - opened[0] - evals) / 1e3))
            opened = None
    blocks = blocks[1:]
    seconds = sum(s for _, s in blocks)
    if not blocks or seconds <= 0:
        return None
    epochs = sum(n for n, _ in blocks)
    return point["global_batch_size"], epochs * point["train_samples"] / seconds


def describe(read, org, system):
    """(accelerators, accelerator model, framework) from the system's description."""
    text = read(f"{org}/systems/{system}.json")
    try:
        desc = json.loads(text)
        count = int(desc["number_of_nodes"]) * int(desc["accelerators_per_node"])
    except (ValueError, KeyError, TypeError):
        return None
    return count, desc.get("accelerator_model_name", ""), desc.get("framework", "")


def csv_field(text):
    return '"' + str(text).replace('"', "'") + '"' if "," in str(text) else str(text)


def main():
    print("round,submitter,system,global_batch,accelerators,accelerator,framework,runs,"
          "images_per_s,source")
    for arg in sys.argv[1:]:
        round_, root = arg.split("=", 1)
        paths, read = lister(root)
        systems = {}
        for p in paths:
            parts = p.split("/")
            if len(parts) == 5 and parts[1] == "results" and parts[3] == BENCHMARK \
                    and parts[4].startswith("result_"):
                systems.setdefault((parts[0], parts[2]), []).append(p)
        for (org, system), files in sorted(systems.items()):
            runs = [r for r in (images_per_s(read(f)) for f in sorted(files)) if r]
            desc = describe(read, org, system)
            if not runs or not desc:
                continue  # logs not stored, or a system description that does not count
            rate = statistics.median(r[1] for r in runs)
            fields = [round_, org, system, runs[0][0], desc[0], desc[1], desc[2], len(runs),
                      f"{rate:.0f}", f"{SOURCE.format(round=round_)}{org}/results/{system}/{BENCHMARK}"]
            print(",".join(csv_field(f) for f in fields))


if __name__ == "__main__":
    main()
