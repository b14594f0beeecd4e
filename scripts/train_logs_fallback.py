#!/usr/bin/env python3
"""Trains the scored fallback of `tpu-doctor logs`: per category, the centroid of the TF-IDF word
vectors of its failure logs; a log no signature explains gets the category whose centroid is
nearest (cosine), with that similarity as its confidence.

    python3 scripts/train_logs_fallback.py testdata/logs/tpu_logs_dev.jsonl CORPUS2.jsonl \
        [--out data/logs/fallback_model.tsv] [--cv]

Against memorising the corpus:
- a word is a feature only if logs from at least two different source repositories use it, so a
  project's own names (a script, a bucket, a model) cannot carry a category;
- words are lower-cased runs of letters, digits and `_` with more letters than digits, at least 3
  long: numbers, addresses, timestamps and versions are not features;
- `--cv` reports leave-one-repository-out accuracy (train on every other source repository, test on
  the held-out one's logs), the figure that predicts real logs from projects the model never saw.

The tokenizer here and `Tokens()` in src/logs/fallback.cc must agree; tests/logs_fallback_test.cc
checks it on a sample.
"""
import argparse
import collections
import json
import math
import re
import sys

WORD = re.compile(r"[A-Za-z0-9_]+")
MIN_REPOS = 2


def tokens(text):
    out = set()
    for m in WORD.finditer(text):
        w = m.group(0).lower()
        if len(w) < 3 or len(w) > 40:
            continue
        letters = sum(c.isalpha() for c in w)
        digits = sum(c.isdigit() for c in w)
        if letters == 0 or digits >= letters:
            continue
        out.add(w)
    return out


def repo_of(row):
    return row.get("source", "").split("#")[0] or row["id"]


def train(rows):
    cats = sorted({r["category"] for r in rows})
    docs = [(tokens(r["log"]), r["category"], repo_of(r)) for r in rows]
    df = collections.Counter()
    repos = collections.defaultdict(set)
    for words, _, repo in docs:
        for w in words:
            df[w] += 1
            repos[w].add(repo)
    idf = {w: math.log(len(rows) / df[w]) for w in df if len(repos[w]) >= MIN_REPOS}
    centroids = {c: collections.Counter() for c in cats}
    for words, cat, _ in docs:
        vec = {w: idf[w] for w in words if w in idf}
        norm = math.sqrt(sum(x * x for x in vec.values())) or 1.0
        for w, x in vec.items():
            centroids[cat][w] += x / norm
    for c in cats:
        norm = math.sqrt(sum(x * x for x in centroids[c].values())) or 1.0
        for w in centroids[c]:
            centroids[c][w] /= norm
    return {"categories": cats, "idf": idf, "centroids": centroids}


def score(model, text):
    vec = {w: model["idf"][w] for w in tokens(text) if w in model["idf"]}
    norm = math.sqrt(sum(x * x for x in vec.values())) or 1.0
    scores = {c: sum(x * model["centroids"][c].get(w, 0.0) for w, x in vec.items()) / norm
              for c in model["categories"]}
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def write(model, path):
    cats = model["categories"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Scored fallback of `tpu-doctor logs`: TF-IDF centroids per category, written by\n")
        f.write("# scripts/train_logs_fallback.py from the log corpora; do not edit by hand.\n")
        f.write("# `categories` then their names; each `word` row: the word, its IDF, then its weight\n")
        f.write("# in each category's unit-length centroid, in the order of `categories`.\n")
        f.write("categories\t" + "\t".join(cats) + "\n")
        for w in sorted(model["idf"]):
            weights = "\t".join(f"{model['centroids'][c].get(w, 0.0):.5f}" for c in cats)
            f.write(f"word\t{w}\t{model['idf'][w]:.5f}\t{weights}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--out", default="data/logs/fallback_model.tsv")
    ap.add_argument("--cv", action="store_true", help="leave-one-repository-out accuracy")
    args = ap.parse_args()
    rows = []
    for path in args.corpora:
        with open(path, encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    if args.cv:
        by_repo = collections.defaultdict(list)
        for r in rows:
            by_repo[repo_of(r)].append(r)
        right = 0
        confusion = collections.Counter()
        for repo, held in by_repo.items():
            model = train([r for r in rows if repo_of(r) != repo])
            for r in held:
                guess = score(model, r["log"])[0][0]
                right += guess == r["category"]
                confusion[(r["category"], guess)] += 1
        cats = len({r["category"] for r in rows})
        print(f"leave-one-repository-out: {right}/{len(rows)} = {100 * right / len(rows):.1f}% "
              f"over {len(by_repo)} repositories (chance: {100 / cats:.1f}%, majority class "
              f"{100 * max(collections.Counter(r['category'] for r in rows).values()) / len(rows):.1f}%)")
        for (truth, guess), n in sorted(confusion.items()):
            if truth != guess:
                print(f"  {truth} -> {guess}: {n}")
        return 0
    model = train(rows)
    write(model, args.out)
    print(f"{len(model['idf'])} words, {len(model['categories'])} categories -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
