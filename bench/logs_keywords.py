#!/usr/bin/env python3
"""Prints the signature keywords of data/logs/signatures.json as a `grep -E -f` pattern file: the
same set of literals tpu-doctor's prefilter looks for, so both tools do the same search.
With --causes: only the keywords of failure signatures (tpu-doctor drops the framework/version
detectors after the first 8 MiB of each file)."""
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
data = json.load(open(os.path.join(ROOT, "data/logs/signatures.json")))
words = set()
for s in data["signatures"]:
    if "--causes" in sys.argv and s.get("kind", "cause") != "cause":
        continue
    words.update(s["keywords"])
    words.update(s.get("after", {}).get("keywords", []))
for w in sorted(words):
    print(re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", w))
