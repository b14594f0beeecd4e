#!/usr/bin/env python3
"""Prints the confusion table of `tpu-doctor logs` on a JSONL corpus of real TPU failure logs.

Each line of the corpus is {"id", "category", "log", ...}. The script runs the built binary on
every log (through stdin) and compares the top-ranked cause's category with the labelled one.

Usage: scripts/logs_confusion.py [CORPUS.jsonl ...] [--binary build/tpu-doctor]
Default corpora: testdata/logs/tpu_logs_dev.jsonl and tpu_logs_dev2.jsonl, together. Also counts
which layer named each top cause (an exact signature, or the scored fallback).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="*", default=[
        os.path.join(ROOT, "testdata/logs/tpu_logs_dev.jsonl"),
        os.path.join(ROOT, "testdata/logs/tpu_logs_dev2.jsonl")])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/tpu-doctor"))
    args = ap.parse_args()
    rows = [json.loads(line) for path in args.corpus for line in open(path, encoding="utf-8")
            if line.strip()]
    layers = collections.Counter()
    table = collections.Counter()
    misses = []
    for row in rows:
        out = subprocess.run([args.binary, "logs", "-", "--format", "json"], input=row["log"].encode(),
                             capture_output=True)
        try:
            causes = json.loads(out.stdout)["causes"]
            got = causes[0]["category"] if causes else "(none)"
            layer = causes[0].get("layer", "signature") if causes else "none"
            layers[(layer, got == row["category"])] += 1
        except (ValueError, KeyError):
            got = "(error: " + out.stderr.decode(errors="replace").strip() + ")"
        table[(row["category"], got)] += 1
        if got != row["category"]:
            misses.append((row["id"], row["category"], got))
    labels = sorted({k[0] for k in table} | {k[1] for k in table})
    width = max(len(label) for label in labels)
    print("rows: labelled category; columns: predicted (numbered as the rows)")
    print(" " * (width + 6) + " ".join(f"{i + 1:>3}" for i in range(len(labels))))
    for i, want in enumerate(labels):
        cells = " ".join(f"{table[(want, got)] or '.':>3}" for got in labels)
        print(f"{i + 1:>3}. {want:<{width}} {cells}")
    hits = sum(v for (w, g), v in table.items() if w == g)
    print(f"\ntop-1 accuracy: {hits}/{len(rows)} = {100.0 * hits / len(rows):.1f}%")
    for layer in ("signature", "fallback", "none"):
        right, wrong = layers[(layer, True)], layers[(layer, False)]
        if right or wrong:
            print(f"  decided by {layer}: {right + wrong} logs, {right} right")
    for m in misses:
        print("miss:", *m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
