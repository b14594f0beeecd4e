#!/usr/bin/env python3
"""Runs `tpu-doctor check` on every model under the given folders and tabulates the findings per
rule against a file of human judgements, for docs/precision.md.

    python3 scripts/precision_table.py [--binary build/tpu-doctor] \
        [--judgements docs/precision/judgements.tsv] [--list] ROOT...

Each model is checked twice, the way a user meets the rules: as it is (`check MODEL`) and for
training at a batch of 8 (`check MODEL --train --batch 8`, which adds the memory rules). A
finding the second run repeats (same rule, node and message) counts once; repeated findings that
the report groups into one count once.

The judgements file is tab-separated: model-path-glob, run (plain/train/*), rule, node-glob,
verdict (true / false / questionable), reason. The first matching line decides. `--list` prints
every finding with its judgement (or `?`), which is how the file is written: read the model, then
write the line.
"""
import argparse
import collections
import fnmatch
import json
import os
import subprocess
import sys

SKIP_DIRS = {"cli", "logs", "bad", "render"}
SKIP_NAMES = ("manifest", "README", "LICENSE")
SKIP_SUFFIXES = (".md", ".jsonl", ".expected", ".py", ".sh", ".csv", ".tsv", ".log", ".gz")


def find_models(root):
    """Files under root a user would pass to check; SavedModel folders as the folder."""
    for dirpath, dirnames, filenames in os.walk(root):
        # JOB rule fixtures are job files (and the configs they are checked with), not models.
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and d != "variables"
                             and not d.startswith("JOB"))
        if "saved_model.pb" in filenames or "saved_model.pbtxt" in filenames:
            yield dirpath
            dirnames[:] = []
            continue
        for name in sorted(filenames):
            if name.startswith(SKIP_NAMES) or name.endswith(SKIP_SUFFIXES):
                continue
            if "extra" in dirpath.split(os.sep) or name.startswith("."):
                continue
            yield os.path.join(dirpath, name)


def run_check(binary, model, train):
    args = [binary, "check", model, "--format", "json", "--fail-on", "never"]
    if train:
        args += ["--train", "--batch", "8"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    report = json.loads(proc.stdout)
    return report, None


def load_judgements(path):
    rules = []
    if not path or not os.path.exists(path):
        return rules
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 6:
                sys.exit(f"{path}: expected 6 tab-separated fields: {line!r}")
            rules.append(parts)
    return rules


def judge(rules, model, run, code, node):
    for glob, run_glob, rule, node_glob, verdict, reason in rules:
        if (fnmatch.fnmatch(model, glob) and fnmatch.fnmatch(run, run_glob) and fnmatch.fnmatch(code, rule)
                and fnmatch.fnmatch(node, node_glob)):
            return verdict, reason
    return "?", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--binary", default="build/tpu-doctor")
    parser.add_argument("--judgements", default="docs/precision/judgements.tsv")
    parser.add_argument("--list", action="store_true", help="print every finding")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 on a false error, a finding nobody judged, or more than one "
                             "questionable or false warning in twenty")
    args = parser.parse_args()

    rules = load_judgements(args.judgements)
    per_rule = collections.defaultdict(lambda: collections.Counter())
    false_reasons = collections.defaultdict(collections.Counter)
    refused = []
    models = 0
    false_errors = 0
    for root in args.roots:
        for model in find_models(root):
            models += 1
            seen = set()  # the train run repeats most plain findings: count each once
            for run in ("plain", "train"):
                report, error = run_check(args.binary, model, run == "train")
                if report is None:
                    if run == "plain":
                        refused.append((model, error))
                    continue
                for finding in report["findings"]:
                    code = finding["code"]
                    node = finding.get("location", {}).get("node", "")
                    key = (code, node, finding["message"])
                    if key in seen:
                        continue
                    seen.add(key)
                    verdict, reason = judge(rules, model, run, code, node)
                    counts = per_rule[code]
                    counts["findings"] += 1
                    counts[finding["severity"]] += 1
                    counts[verdict] += 1
                    if verdict in ("false", "questionable"):
                        false_reasons[code][f"{verdict}: {reason}"] += 1
                    if verdict == "false" and finding["severity"] == "error":
                        false_errors += 1
                    if args.list:
                        print(f"{verdict}\t{model}\t{run}\t{code}\t{node}\t"
                              f"{finding['severity']}\t{finding['message']}")
    if args.list:
        return 0

    print(f"{models} models, each checked plain and with `--train --batch 8`; "
          f"{len(refused)} refused with exit 2\n")
    print("| rule | findings | errors | warnings | notes | judged true | false | questionable "
          "| not judged |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    total = collections.Counter()
    for code in sorted(per_rule):
        c = per_rule[code]
        total.update(c)
        print(f"| {code} | {c['findings']} | {c['error']} | {c['warning']} | {c['note']} "
              f"| {c['true']} | {c['false']} | {c['questionable']} | {c['?']} |")
    print(f"| all | {total['findings']} | {total['error']} | {total['warning']} | {total['note']} "
          f"| {total['true']} | {total['false']} | {total['questionable']} | {total['?']} |")
    if false_reasons:
        print("\nFalse and questionable findings:\n")
        for code in sorted(false_reasons):
            for reason, n in false_reasons[code].most_common():
                print(f"- {code} ×{n} — {reason}")
    if refused:
        print("\nRefused (exit 2):\n")
        for model, error in refused:
            print(f"- `{model}`: {error}")
    if args.check:
        doubtful_warnings = sum(n for code in false_reasons for n in false_reasons[code].values())
        problems = []
        if total["?"]:
            problems.append(f"{total['?']} findings not judged (run with --list)")
        if false_errors:
            problems.append(f"{false_errors} false errors")
        if doubtful_warnings * 20 > max(total["warning"], 1):
            problems.append(f"{doubtful_warnings} false or questionable of {total['warning']} "
                            "warnings (more than one in twenty)")
        if problems:
            print("\nFAIL: " + "; ".join(problems))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
