#!/usr/bin/env python3
"""Run `tpu-doctor check` over the peer test suites and print read rate and verdicts.

The suites are extracted first with scripts/extract_peer_suites.py (see bench/README.md). For each
suite this prints how many programs were read, refused (exit 2 with a one-line message, grouped by
message) and crashed (any other exit, a signal, or a refusal that is not one line); then a table of
verdicts per dtype group: the widest type a program computes in (the result of an operation that
is not a constant, or the entry's signature; a wide literal converted at once does not count).
Last, the programs whose group is 32-bit or narrower and that TPU001 (float64) blocks: each is a
false error, since such a program computes nothing in float64.

  bench/peer_suites.py /tmp/peer [--tpu-doctor build/tpu-doctor] [--jobs 4]
"""

import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys

SUITES = ("stablehlo", "xla_hlo", "xla_parser")
# An element type in MLIR (`tensor<2x3xf64>`, `tensor<f64>`, `complex<f64>`) or HLO (`f64[2,3]`).
ELEMENT = r"(?:(?<![\w.%])|(?<=[\d?]x)){}(?=[>\[])"
WIDE = (("complex128", re.compile(r"complex<f64>|" + ELEMENT.format("c128"))),
        ("float64", re.compile(ELEMENT.format("f64"))),
        ("int64", re.compile(ELEMENT.format("(?:u?i64|[su]64)"))))
NARROW = "32-bit or narrower"
MLIR_OP = re.compile(r"^\s*%[\w#:, %]+= *\"?([\w.]+)")
HLO_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*?)\s+([a-z][a-z0-9\-]*)\(")


def computed_types(text):
    """The result types of every operation that is not a constant, and the entry's signature:
    the types a program computes in. A wide literal converted at once is not among them."""
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        if stripped.startswith(("func.func public", "ENTRY", "HloModule")):
            found.append(stripped)
            continue
        mlir = MLIR_OP.match(line)
        if mlir:
            if not mlir.group(1).endswith("constant"):
                signature = line.rsplit(" : ", 1)[-1]
                found.append(signature.rsplit("->", 1)[-1])
            continue
        hlo = HLO_INSTR.match(line)
        if hlo and hlo.group(2) != "constant":
            found.append(hlo.group(1))
    return "\n".join(found)


def dtype_group(path):
    """The widest type a program computes in (see computed_types)."""
    text = computed_types(path.read_text(errors="replace"))
    for group, pattern in WIDE:
        if pattern.search(text):
            return group
    return NARROW


def run_one(tool, path):
    proc = subprocess.run([tool, "check", str(path), "--format", "json", "--fail-on", "never"],
                          capture_output=True, timeout=120)
    result = {"rc": proc.returncode, "stderr": proc.stderr.decode(errors="replace")}
    if proc.returncode == 0:
        report = json.loads(proc.stdout)
        result["verdict"] = report["verdict"]
        result["codes"] = sorted({f["code"] for f in report["findings"]
                                  if f["severity"] == "error"})
    return result


def message_class(stderr):
    """A refusal's message with names and numbers taken out, to group alike refusals."""
    line = stderr.strip().splitlines()[0] if stderr.strip() else ""
    line = re.sub(r"^tpu-doctor: .*?\.[a-z]+(:\d+:\d+)?: ", "", line)
    line = re.sub(r"line \d+(, column \d+)?", "line N", line)
    line = re.sub(r"`[^`]*`", "`…`", line)
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r"\d+", "N", line)
    return line[:140]


def summarize(suite, results):
    total = len(results)
    read = [p for p, r in results.items() if r["rc"] == 0]
    refused = {p: r for p, r in results.items()
               if r["rc"] == 2 and len(r["stderr"].strip().splitlines()) == 1}
    crashed = {p: r for p, r in results.items() if p not in refused and r["rc"] != 0}
    print(f"\n{suite}: {total} programs, read {len(read)} ({100.0 * len(read) / total:.1f}%), "
          f"refused {len(refused)}, crashed {len(crashed)}")
    for message, count in collections.Counter(
            message_class(r["stderr"]) for r in refused.values()).most_common():
        print(f"  refused {count:4d}  {message}")
    for path, r in sorted(crashed.items()):
        print(f"  CRASH rc={r['rc']} {path.name}: {r['stderr'][:200]!r}")
    return crashed


def verdict_table(groups, results):
    columns = ("ready", "runs with warnings", "blocked", "refused")
    rows = collections.defaultdict(collections.Counter)
    for path, r in results.items():
        column = r.get("verdict", "refused") if r["rc"] in (0, 2) else "refused"
        rows[groups[path]][column] += 1
    print("\nverdicts per dtype group (every suite):")
    print(f"  {'group':<20}" + "".join(f"{c:>20}" for c in columns))
    for group in sorted(rows, key=lambda g: (-sum(rows[g].values()), g)):
        print(f"  {group:<20}" + "".join(f"{rows[group][c]:>20}" for c in columns))


def false_float64_errors(groups, results):
    false = sorted(p.name for p, r in results.items()
                   if groups[p] == NARROW and "TPU001" in r.get("codes", []))
    print(f"\n32-bit-or-narrower programs blocked by TPU001 (float64): {len(false)}")
    for name in false:
        print(f"  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--tpu-doctor", default="build/tpu-doctor")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    crashes = 0
    groups, results = {}, {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for suite in SUITES:
            paths = sorted((args.folder / suite).glob("*"))
            if not paths:
                sys.exit(f"peer_suites: no programs under {args.folder / suite}; "
                         "run scripts/extract_peer_suites.py first")
            suite_results = dict(zip(paths, pool.map(lambda p: run_one(args.tpu_doctor, p),
                                                      paths)))
            crashes += len(summarize(suite, suite_results))
            results.update(suite_results)
            groups.update({p: dtype_group(p) for p in paths})
    verdict_table(groups, results)
    false_float64_errors(groups, results)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
