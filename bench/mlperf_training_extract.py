#!/usr/bin/env python3
"""Step and block times of MLPerf Training LLM results, from their MLLOG result files.

    python3 bench/mlperf_training_extract.py 3.1=PATH 4.0=PATH 4.1=PATH \
        > bench/data/mlperf_training_gpt3.csv
    python3 bench/mlperf_training_extract.py --benchmark llama31_405b 5.0=PATH 5.1=PATH \
        > bench/data/mlperf_training_llama31_405b.csv

Each PATH is a checkout (or a bare mirror: files are read with `git show HEAD:...` when it has
no work tree) of github.com/mlcommons/training_results_v{ROUND}. For every result directory of
the benchmark (GPT-3 175B unless `--benchmark` names another) it reads each run's
`result_N.txt` and prints one row: the global batch and sequence length the log states, the
tokens a block trains on (`block_start`'s epoch_count; empty where the log counts samples
instead), and the medians over the runs of each run's median block time and, where the log has
one (NeMo's `tracked_stats` train_step_timing or train_step_time, or its LoRA logs' throughput
in sequences a second), its median training step. A
MaxText log closes a block after the block's evaluation (mllog_utils.early_stop_check runs after
the eval loss), so its block time holds the eval pass; a NeMo log times the eval apart
(eval_start/eval_stop) and its blocks hold none. bench/mlperf_training_validate.py predicts the
rows.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SOURCE = "https://github.com/mlcommons/training_results_v{round}/tree/main/"
STEP_KEYS = ("train_step_timing in s", "train_step_timing", "train_step_time")


def lister(root):
    """(list of paths, reader of one path) over a checkout or a bare repository."""
    if os.path.isdir(os.path.join(root, "Google")):
        paths = [os.path.relpath(os.path.join(d, f), root)
                 for d, _, files in os.walk(root) for f in files]
        return paths, lambda p: open(os.path.join(root, p), encoding="utf-8").read()
    git = ["git", "-C", root]
    paths = subprocess.run(git + ["ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.split()
    return paths, lambda p: subprocess.run(git + ["show", "HEAD:" + p], capture_output=True,
                                           text=True).stdout


def events(text):
    out = []
    for line in text.splitlines():
        at = line.find(":::MLLOG ")
        if at >= 0:
            try:
                out.append(json.loads(line[at + len(":::MLLOG "):]))
            except json.JSONDecodeError:
                pass
    return out


def run_times(text, seq=None, throughput=False):
    """(global batch, seq, tokens a block, median block s, median step s or None, whether the
    blocks hold the evals: the log times no eval of its own) of one run."""
    ev = events(text)
    point = {e["key"]: e["value"] for e in ev if e["event_type"] == "POINT_IN_TIME"}
    # Each block_stop closes the block_start before it; a log may open its first block with
    # run_start alone (MaxText's MLPerf 4.0 fork), and that block is left out.
    starts = [e for e in ev if e["key"] == "block_start"]
    blocks, opened = [], None
    for e in ev:
        if e["key"] == "block_start":
            opened = e["time_ms"]
        elif e["key"] == "block_stop" and opened is not None:
            blocks.append((e["time_ms"] - opened) / 1e3)
            opened = None
    stats = [e["value"] for e in ev if e["key"] == "tracked_stats" and isinstance(e["value"], dict)]
    steps = [v[k] for v in stats for k in STEP_KEYS if k in v]
    if throughput and not steps:  # NeMo's LoRA logs its training throughput, sequences a second
        steps = [point["global_batch_size"] / v["throughput"] for v in stats
                 if v.get("throughput")]
    return (point["global_batch_size"], point.get("max_sequence_length", seq),
            starts[0]["metadata"].get("epoch_count", ""), statistics.median(blocks),
            statistics.median(steps) if steps else None,
            not any(e["key"] == "eval_start" for e in ev))


def main():
    print("round,submitter,system,global_batch,seq,block_tokens,runs,block_s,step_s,"
          "eval_in_block,source")
    ap = argparse.ArgumentParser()
    ap.add_argument("--benchmark", default="gpt3")
    ap.add_argument("--throughput", action="store_true",
                    help="take the step from the logs' throughput (sequences a second) where they "
                    "time no step (NeMo's LoRA)")
    ap.add_argument("--seq", type=int, help="the sequence length where the logs do not state it "
                    "(llama2_70b_lora: 8,192, its implementations' MAX_SEQLEN)")
    ap.add_argument("rounds", nargs="+", metavar="ROUND=PATH")
    args = ap.parse_args()
    for arg in args.rounds:
        round_, root = arg.split("=", 1)
        paths, read = lister(root)
        systems = {}
        for p in paths:
            parts = p.split("/")
            if len(parts) == 5 and parts[1] == "results" and parts[3] == args.benchmark \
                    and parts[4].startswith("result_"):
                systems.setdefault((parts[0], parts[2]), []).append(p)
        for (org, system), files in sorted(systems.items()):
            texts = [read(f) for f in sorted(files)]
            runs = [run_times(t, args.seq, args.throughput) for t in texts if t]
            if not runs:
                continue  # its result files are not stored (large-file pointers)
            batch, seq, tokens = runs[0][:3]
            block = statistics.median(r[3] for r in runs)
            steps = [r[4] for r in runs if r[4] is not None]
            step = f"{statistics.median(steps):.3f}" if steps else ""
            eval_in_block = "yes" if all(r[5] for r in runs) else "no"
            source = SOURCE.format(round=round_)
            print(f"{round_},{org},{system},{batch},{seq},{tokens},{len(runs)},{block:.2f},{step},"
                  f"{eval_in_block},{source}{org}/results/{system}/{args.benchmark}")


if __name__ == "__main__":
    main()
