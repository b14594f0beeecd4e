"""scripts/new_rule.py, the rule scaffolder, run on a copy of the files it edits."""

import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EDITED = ["src/checks/factories.h", "src/checks/registry.cc", "src/jobs/rules/job_rules.h",
          "src/jobs/job_registry.cc"]


def scaffold(root, *args):
    return subprocess.run([sys.executable, str(ROOT / "scripts/new_rule.py"), *args,
                           "--root", str(root)], capture_output=True, text=True)


def tree(tmp_path):
    for rel in EDITED:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    (tmp_path / "docs/rules").mkdir(parents=True)
    return tmp_path


def factories(path, ret):
    return re.findall(rf"^std::unique_ptr<{ret}> (Make\w+)\(\);", path.read_text(), re.M)


def registered(path):
    return re.findall(r"v->push_back\((Make\w+)\(\)\);", path.read_text())


def test_a_model_check_is_written_registered_in_order_and_documented(tmp_path):
    root = tree(tmp_path)
    out = scaffold(root, "TPU004", "wide-gather", "a gather whose indices are int64",
                   "--severity", "note")
    assert out.returncode == 0, out.stderr
    source = root / "src/checks/tpu/tpu004_wide_gather.cc"
    text = source.read_text()
    assert 'return "TPU004";' in text and 'return "wide-gather";' in text
    assert "std::unique_ptr<Check> MakeTpu004WideGather()" in text
    assert "Severity::kNote" in text
    names = factories(root / "src/checks/factories.h", "Check")
    assert "MakeTpu004WideGather" in names and names == sorted(names)
    order = registered(root / "src/checks/registry.cc")
    assert order == sorted(order)
    assert order.index("MakeTpu004WideGather") == order.index("MakeTpu003UnsupportedOp") + 1
    page = (root / "docs/rules/TPU004.md").read_text()
    assert page.startswith("# TPU004 wide-gather\n")
    for heading in ("## What it flags", "## Why it matters on TPU", "## Example", "## How to fix",
                    "## References"):
        assert heading in page
    assert (root / "testdata/rules/TPU004/README.md").exists()
    # Once is enough: the same code again, or a taken one, is refused and nothing changes.
    before = (root / "src/checks/registry.cc").read_text()
    for code in ("TPU004", "TPU001"):
        again = scaffold(root, code, "other-name", "x")
        assert again.returncode == 2 and "already registered" in again.stderr
    assert (root / "src/checks/registry.cc").read_text() == before


def test_a_job_rule_and_a_new_family(tmp_path):
    root = tree(tmp_path)
    assert scaffold(root, "JOB011", "no-checkpoint-dir", "the job writes no checkpoints").returncode == 0
    text = (root / "src/jobs/rules/job011_no_checkpoint_dir.cc").read_text()
    assert 'TPUD_JOB_RULE("JOB011", "no-checkpoint-dir", "the job writes no checkpoints")' in text
    order = registered(root / "src/jobs/job_registry.cc")
    assert order[-1] == "MakeJob011NoCheckpointDir" and order == sorted(order)
    assert not (root / "testdata/rules/JOB011").exists()  # job rules have tests, not fixtures
    assert scaffold(root, "NET001", "slow-dcn", "cross-slice traffic over DCN").returncode == 0
    assert (root / "src/checks/net/net001_slow_dcn.cc").exists()
    order = registered(root / "src/checks/registry.cc")
    assert order == sorted(order) and "MakeNet001SlowDcn" in order


def test_bad_arguments_are_refused_with_one_line(tmp_path):
    root = tree(tmp_path)
    for args in (("tpu4", "x", "y"), ("TPU004", "Wide_Gather", "y"), ("TPU004", "x", 'say "hi"')):
        out = scaffold(root, *args)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
