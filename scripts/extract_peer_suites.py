#!/usr/bin/env python3
"""Extract two peer test suites of XLA programs into a folder, for bench/peer_suites.sh.

  stablehlo/    every program of openxla/stablehlo `stablehlo/testdata/` (lowered by JAX), with the
                test harness's `check.*` custom calls removed (they compare results; no model has
                them).
  xla_hlo/      every `*.hlo` file under `xla/` of an XLA tree (openxla/xla or a mirror that tracks
                it, such as ROCm/xla).
  xla_parser/   the HLO module literals of `xla/hlo/parser/hlo_parser_test.cc` that XLA's parser
                must accept: the round-trip case lists, the inputs of the non-round-trip cases, and
                the literals of single tests that assert the parse succeeded (a test that looks for
                an error message is left out).

Both repositories are read as git objects (`git show REV:PATH`), so a bare mirror works:

  scripts/extract_peer_suites.py --stablehlo /work/.mirror/openxla+stablehlo/repo \
      --xla /work/.mirror/ROCm+xla/repo --xla-rev main --out /tmp/peer
"""

import argparse
import pathlib
import re
import subprocess
import sys


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def list_files(repo, rev, folder):
    out = git(repo, "ls-tree", "-r", "--name-only", rev, folder).decode()
    return [line for line in out.splitlines() if line]


def show(repo, rev, path):
    return git(repo, "show", f"{rev}:{path}")


def flat_name(path):
    return path.replace("/", "__")


CHECK_CALL = re.compile(r"^\s*(?:(%[\w.]+) = )?stablehlo\.custom_call @check\.\w+\(([^)]*)\)"
                        r".*: \((.*)\) -> .*$")


def first_type(types):
    """The first of a comma-separated list of MLIR types (types themselves contain commas)."""
    depth = 0
    for i, c in enumerate(types):
        depth += c in "<(["
        depth -= c in ">)]"
        if c == "," and depth == 0:
            return types[:i].strip()
    return types.strip()


def strip_checks(text):
    """The program without the harness's `check.*` calls. A check whose boolean result the function
    returns (`%3 = ... @check.eq(%expected, %actual)`, then `return %3`) is replaced by returning the
    value it checked, and the function's result type follows."""
    lines = text.splitlines(keepends=True)
    out, renamed = [], {}
    for line in lines:
        if re.match(r'\s*"check\.\w+"\(', line):
            continue
        check = CHECK_CALL.match(line)
        if check:
            if check.group(1):
                operands = [o.strip() for o in check.group(2).split(",")]
                renamed[check.group(1)] = (operands[-1], first_type(check.group(3)))
            continue
        out.append(line)
    for result, (value, value_type) in renamed.items():
        for i, line in enumerate(out):
            if re.match(r"\s*(?:func\.)?return " + re.escape(result) + r" : ", line):
                out[i] = re.sub(r"return .*", f"return {value} : {value_type}", line)
                for j in range(i, -1, -1):
                    if out[j].lstrip().startswith("func.func"):
                        out[j] = re.sub(r"-> \(?tensor<i1>\)? \{", f"-> {value_type} {{", out[j])
                        break
    return "".join(out)


def extract_stablehlo(repo, rev, out):
    folder = out / "stablehlo"
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in list_files(repo, rev, "stablehlo/testdata"):
        if not path.endswith(".mlir"):
            continue
        text = strip_checks(show(repo, rev, path).decode())
        name = path.removeprefix("stablehlo/testdata/").replace("/", "__")
        (folder / name).write_text(text)
        count += 1
    return count


def extract_xla_hlo(repo, rev, out):
    folder = out / "xla_hlo"
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in list_files(repo, rev, "xla"):
        if not path.endswith(".hlo"):
            continue
        try:
            text = show(repo, rev, path)
        except subprocess.CalledProcessError:
            print(f"extract_peer_suites: {path} is listed but absent from this mirror",
                  file=sys.stderr)
            continue
        (folder / flat_name(path)).write_bytes(text)
        count += 1
    return count


RAW = re.compile(r'R"\((.*?)\)"', re.S)
CASE_LISTS = ("CreateTestCases", "CreateShortTestCases", "CreateNonRoundtripTestCases")
SUCCESS = re.compile(r"TF_(ASSERT|EXPECT)_OK|ASSERT_OK_AND_ASSIGN|IsOk\(\)|EXPECT_OK")
FAILURE = re.compile(r"HasSubstr|StatusIs|ExpectHasSubstr|IsError|\.ok\(\)\)|EXPECT_FALSE|"
                     r"Not\(IsOk|status\(\)\.message")


def case_list_literals(source):
    """Module literals of the parametrized lists (for non-round-trip cases: the input only)."""
    found = []
    for name in CASE_LISTS:
        match = re.search(r"std::vector<\w+> " + name + r"\(\) \{", source)
        if not match:
            continue
        end = source.find("// clang-format on", match.end())
        body = source[match.end():end]
        entries = re.split(r"\n\{\n", body)
        for entry in entries:
            literals = RAW.findall(entry)
            if literals and "HloModule" in literals[0]:
                found.append(literals[0])
    return found


def single_test_literals(source):
    """Literals of TEST/TEST_F bodies that assert success and look for no error."""
    found = []
    starts = list(re.finditer(r"\nTEST(?:_F|_P)?\((\w+), (\w+)\) \{\n", source))
    for match, following in zip(starts, starts[1:] + [None]):
        body = source[match.end():following.start() if following else len(source)]
        if not SUCCESS.search(body) or FAILURE.search(body):
            continue
        for literal in RAW.findall(body):
            # A literal with a `%s` or `%d` is a format string the test fills in: not HLO yet.
            if re.match(r"\s*HloModule\b", literal) and not re.search(r"%[sd]\b", literal):
                found.append((match.group(2), literal))
    return found


def extract_xla_parser(repo, rev, out):
    folder = out / "xla_parser"
    folder.mkdir(parents=True, exist_ok=True)
    source = show(repo, rev, "xla/hlo/parser/hlo_parser_test.cc").decode()
    count = 0
    for literal in case_list_literals(source):
        count += 1
        (folder / f"case_{count:04d}.hlo").write_text(literal)
    for test, literal in single_test_literals(source):
        count += 1
        (folder / f"{test}_{count:04d}.hlo").write_text(literal)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stablehlo", required=True, help="git folder of openxla/stablehlo")
    parser.add_argument("--stablehlo-rev", default="HEAD")
    parser.add_argument("--xla", required=True, help="git folder of openxla/xla or a mirror")
    parser.add_argument("--xla-rev", default="HEAD")
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        sys.exit(f"extract_peer_suites: {args.out} is not empty")
    counts = {
        "stablehlo": extract_stablehlo(args.stablehlo, args.stablehlo_rev, args.out),
        "xla_hlo": extract_xla_hlo(args.xla, args.xla_rev, args.out),
        "xla_parser": extract_xla_parser(args.xla, args.xla_rev, args.out),
    }
    revs = {
        "stablehlo": git(args.stablehlo, "rev-parse", args.stablehlo_rev).decode().strip(),
        "xla": git(args.xla, "rev-parse", args.xla_rev).decode().strip(),
    }
    (args.out / "SOURCES").write_text(
        f"openxla/stablehlo {revs['stablehlo']}\nxla {revs['xla']}\n")
    for name, count in counts.items():
        print(f"{name}: {count} programs")


if __name__ == "__main__":
    main()
