#!/usr/bin/env python3
"""Regenerate data/hlo/mlir_ops.tsv: every op of the StableHLO and CHLO dialects (openxla/stablehlo
stablehlo/dialect/{StablehloOps,ChloOps}.td) and of MHLO (openxla/xla, or a mirror that tracks it,
xla/mlir_hlo/mhlo/IR/hlo_ops.td), read from the TableGen op definitions at the given commits.

  scripts/gen_mlir_op_table.py --stablehlo /work/.mirror/openxla+stablehlo/repo \
      --xla /work/.mirror/ROCm+xla/repo --xla-rev main > data/hlo/mlir_ops.tsv

tests/mlir_op_table_test.cc then checks that tpu-doctor maps each op to an HLO opcode of
data/hlo/opcodes.tsv or documents it in data/hlo/mlir_ops_unmapped.tsv.
"""

import argparse
import re
import subprocess

# `def StableHLO_AbsOp: StableHLO_UnaryElementwiseOp<"abs", ...` (the name may be on the next line).
OP_DEF = re.compile(r'^def (\w+?)_\w+Op\s*:\s*\w+<\s*"([\w.]+)"', re.M)
SOURCES = (
    ("stablehlo", "stablehlo", "stablehlo/dialect/StablehloOps.td", "StableHLO"),
    ("chlo", "stablehlo", "stablehlo/dialect/ChloOps.td", "CHLO"),
    ("mhlo", "xla", "xla/mlir_hlo/mhlo/IR/hlo_ops.td", "MHLO"),
)


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stablehlo", required=True)
    parser.add_argument("--stablehlo-rev", default="HEAD")
    parser.add_argument("--xla", required=True)
    parser.add_argument("--xla-rev", default="HEAD")
    args = parser.parse_args()
    repos = {"stablehlo": (args.stablehlo, args.stablehlo_rev), "xla": (args.xla, args.xla_rev)}
    commits = {k: git(repo, "rev-parse", rev).strip() for k, (repo, rev) in repos.items()}
    rows = []
    for dialect, repo_key, path, prefix in SOURCES:
        repo, rev = repos[repo_key]
        text = git(repo, "show", f"{rev}:{path}")
        names = sorted({name for p, name in OP_DEF.findall(text) if p == prefix})
        rows += [(f"{dialect}.{name}", dialect) for name in names]
    print("# Every op of the StableHLO and CHLO dialects (openxla/stablehlo "
          f"{commits['stablehlo'][:12]}, stablehlo/dialect/*Ops.td)")
    print(f"# and of MHLO (xla {commits['xla'][:12]}, xla/mlir_hlo/mhlo/IR/hlo_ops.td), read "
          "from their TableGen definitions by")
    print("# scripts/gen_mlir_op_table.py. Do not edit: regenerate.")
    print("# Columns: op<TAB>dialect")
    for op, dialect in rows:
        print(f"{op}\t{dialect}")


if __name__ == "__main__":
    main()
