#!/usr/bin/python3
"""Times whole commands: median wall time of RUNS runs after one warm-up, in milliseconds.

Usage: timeit.py RUNS -- CMD ARGS...   prints "<median_ms> <min_ms>"

A command that exits non-zero stops the benchmark (exit 1): a baseline that fails at once (its
module not installed) would otherwise time as a fast one.
"""
import statistics
import subprocess
import sys
import time

runs = int(sys.argv[1])
cmd = sys.argv[sys.argv.index("--") + 1:]
warmup = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if warmup.returncode != 0:
    sys.exit(f"timeit.py: `{' '.join(cmd)}` exited {warmup.returncode}: "
             f"{warmup.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append((time.perf_counter() - t0) * 1000)
print(f"{statistics.median(times):.1f} {min(times):.1f}")
