#!/usr/bin/env python3
"""Start a new rule: write its file, register it, and start its page and fixture folder.

  scripts/new_rule.py TPU004 wide-gather "a gather whose index operand is int64"
  scripts/new_rule.py JOB011 no-checkpoint-dir "the job writes no checkpoints" --severity warning

A model check (any prefix but JOB) goes to src/checks/<family>/<code>_<name>.cc, its factory into
src/checks/factories.h and src/checks/registry.cc; a job rule (JOB) to src/jobs/rules/, its factory
into src/jobs/rules/job_rules.h and src/jobs/job_registry.cc; each list stays sorted by code. The
page docs/rules/CODE.md gets the headings every page has, and testdata/rules/CODE/ a README saying
which fixtures to add: RulesTest fails until the rule has a firing and a silent fixture and its
page is written. Nothing is overwritten; a code already registered is refused.
"""

import argparse
import pathlib
import re
import sys

SEVERITIES = {"error": "kError", "warning": "kWarning", "note": "kNote"}


def camel(words):
    return "".join(w[:1].upper() + w[1:] for w in words)


def fail(message):
    print(f"new_rule: {message}", file=sys.stderr)
    sys.exit(2)


def insert_sorted(path, line, key_pattern):
    """Insert `line` among the lines matching `key_pattern` (a regex with one group, the sort key),
    keeping them sorted; the file must already hold at least one such line."""
    lines = path.read_text().splitlines(keepends=True)
    key = re.search(key_pattern, line).group(1)
    matches = [i for i, l in enumerate(lines) if re.search(key_pattern, l)]
    if not matches:
        fail(f"{path} has no line like `{line.strip()}` to sort among")
    at = next((i for i in matches if re.search(key_pattern, lines[i]).group(1) > key),
              matches[-1] + 1)
    lines.insert(at, line if line.endswith("\n") else line + "\n")
    path.write_text("".join(lines))


def check_source(code, name, summary, severity, factory, family):
    cls = camel([code.lower()] + name.split("-"))
    return f'''// {code} {name}: {summary}.
#include "src/checks/factories.h"

namespace tpudoctor {{
namespace {{

class {cls} final : public Check {{
 public:
  std::string_view code() const override {{ return "{code}"; }}
  std::string_view name() const override {{ return "{name}"; }}
  std::string_view summary() const override {{
    return "{summary}";
  }}

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {{
    // Walk the graph (ForEachNodeWithPath reaches subgraphs) and add a finding per problem:
    //   Diagnostic d;
    //   d.code = std::string(code());
    //   d.severity = Severity::{SEVERITIES[severity]};
    //   d.message = "...";
    //   d.location = LocationOf(path, node);
    //   sink.Add(std::move(d));
    (void)ctx;
    (void)sink;
  }}
}};

}}  // namespace

std::unique_ptr<Check> {factory}() {{ return std::make_unique<{cls}>(); }}

}}  // namespace tpudoctor
'''


def job_source(code, name, summary, severity, factory):
    cls = camel([code.lower()])
    return f'''// {code} {name}: {summary}.
#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {{
namespace {{

class {cls} final : public JobRule {{
 public:
  TPUD_JOB_RULE("{code}", "{name}", "{summary}")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {{
    // Read c.spec (and c.graph when a model was given) and add a finding per problem:
    //   sink.Add(JobFinding(c, code(), Severity::{SEVERITIES[severity]}, "...", "field", "fix"));
    (void)c;
    (void)sink;
  }}
}};

}}  // namespace

std::unique_ptr<JobRule> {factory}() {{ return std::make_unique<{cls}>(); }}

}}  // namespace tpudoctor
'''


def page(code, name, summary, severity, kind):
    fixtures = ("`testdata/rules/{0}/fires_*` and `silent_*`".format(code) if kind == "model"
                else "a case in tests/job_rules_test.cc")
    return f"""# {code} {name}

Severity: **{severity}**.

## What it flags

{summary[:1].upper() + summary[1:]}. (Say exactly when it fires and when it stays silent; the
fixtures are {fixtures}.)

## Why it matters on TPU

(What XLA or the framework does, with the source. A judgement is said to be one.)

## Example

```
{severity}[{code}]: ...
```

## How to fix

- ...

## References

- ...
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("code", help="CODE: 2-5 capitals and 3 digits, e.g. TPU004")
    parser.add_argument("name", help="kebab-case name, e.g. wide-gather")
    parser.add_argument("summary", help="one line for `tpu-doctor rules`")
    parser.add_argument("--severity", choices=sorted(SEVERITIES), default="warning")
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    code, name, root = args.code, args.name, args.root
    if not re.fullmatch(r"[A-Z]{2,5}[0-9]{3}", code):
        fail(f"`{code}` is not a rule code (2-5 capitals and 3 digits, e.g. TPU004)")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        fail(f"`{name}` is not a kebab-case name (e.g. wide-gather)")
    if '"' in args.summary or "\\" in args.summary:
        fail("the summary may not hold quotes or backslashes")
    family = re.match(r"[A-Z]+", code).group(0)
    snake = name.replace("-", "_")
    factory = "Make" + camel([code.lower()] + name.split("-"))
    if family == "JOB":
        kind = "job"
        source = root / "src/jobs/rules" / f"{code.lower()}_{snake}.cc"
        header, registry = root / "src/jobs/rules/job_rules.h", root / "src/jobs/job_registry.cc"
        ret = "JobRule"
    else:
        kind = "model"
        source = root / "src/checks" / family.lower() / f"{code.lower()}_{snake}.cc"
        header, registry = root / "src/checks/factories.h", root / "src/checks/registry.cc"
        ret = "Check"
    doc = root / "docs/rules" / f"{code}.md"
    fixtures = root / "testdata/rules" / code
    for taken in (header, registry):
        if re.search(r"Make" + re.escape(camel([code.lower()])) + r"[A-Z(]", taken.read_text()):
            fail(f"{code} is already registered ({taken.relative_to(root)})")
    for path in (source, doc):
        if path.exists():
            fail(f"{path.relative_to(root)} exists")

    source.parent.mkdir(parents=True, exist_ok=True)
    if kind == "job":
        source.write_text(job_source(code, name, args.summary, args.severity, factory))
    else:
        source.write_text(check_source(code, name, args.summary, args.severity, factory, family))
    insert_sorted(header, f"std::unique_ptr<{ret}> {factory}();",
                  rf"^std::unique_ptr<{ret}> (Make\w+)\(\);")
    insert_sorted(registry, f"    v->push_back({factory}());", r"^\s+v->push_back\((Make\w+)\(\)\);")
    doc.write_text(page(code, name, args.summary, args.severity, kind))
    written = [source, header, registry, doc]
    if kind == "model":
        fixtures.mkdir(parents=True, exist_ok=True)
        readme = fixtures / "README.md"
        readme.write_text(
            f"# {code} fixtures\n\nAdd at least one `fires_NAME.<onnx|mlir|hlo|...>` that {code} "
            "must report and one `silent_NAME.*` it must not (scripts/gen_rule_fixtures.py makes "
            "ONNX ones); their findings are compared with `NAME.expected` "
            "(UPDATE_GOLDENS=1 writes them).\n")
        written.append(readme)
    for path in written:
        print(path.relative_to(root))


if __name__ == "__main__":
    main()
