#!/usr/bin/python3
"""Times whole commands: median wall time of RUNS runs after one warm-up, in milliseconds.

Usage: timeit.py RUNS -- CMD ARGS...   prints "<median_ms> <min_ms>"
"""
import statistics
import subprocess
import sys
import time

runs = int(sys.argv[1])
cmd = sys.argv[sys.argv.index("--") + 1:]
subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append((time.perf_counter() - t0) * 1000)
print(f"{statistics.median(times):.1f} {min(times):.1f}")
