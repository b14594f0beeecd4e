"""The GitHub Action (action.yml + scripts/action_check.sh) and the pre-commit hooks
(.pre-commit-hooks.yaml), run the way GitHub and pre-commit run them, with this build's CLI."""

import json
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import ROOT, TESTDATA

yaml = pytest.importorskip("yaml")


def load_yaml(name):
    return yaml.safe_load((ROOT / name).read_text())


def run_action(binary, workspace, **inputs):
    """Runs the action's check step as GitHub would: INPUT_* from `with:`, GITHUB_OUTPUT a file."""
    outputs = workspace / "github_output"
    outputs.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INPUT_")}
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    env.update(TPUD_BINARY=binary, GITHUB_WORKSPACE=str(workspace), GITHUB_OUTPUT=str(outputs))
    step = subprocess.run([str(ROOT / "scripts/action_check.sh")], env=env, capture_output=True,
                          text=True, cwd=workspace)
    assert step.returncode == 0, step.stderr  # the job fails later, after the SARIF upload
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    return step, values


def test_action_declares_every_input_its_script_reads():
    action = load_yaml("action.yml")
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    check = next(s for s in steps if s.get("id") == "check")
    script = (ROOT / "scripts/action_check.sh").read_text()
    read = set(re.findall(r"\bINPUT_[A-Z_]+", script))
    assert read == set(check["env"]), "the step passes exactly the inputs the script reads"
    for name, value in check["env"].items():
        key = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value).group(1)
        assert key in action["inputs"] and name == "INPUT_" + key.upper().replace("-", "_")
    used = set(re.findall(r"inputs\.([a-z-]+)", (ROOT / "action.yml").read_text()))
    assert used <= set(action["inputs"]), used - set(action["inputs"])
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert "always()" in upload["if"]  # the findings reach code scanning even when the job fails
    assert os.access(ROOT / "scripts/action_check.sh", os.X_OK)


def test_action_writes_sarif_and_reports_a_blocked_model(binary, sarif_schema, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for name in ("nonzero_mask.onnx", "mlp_4096x3.onnx"):
        shutil.copy(TESTDATA / "models" / name, models / name)
    step, out = run_action(binary, tmp_path, paths="models", target="tpu-v5e", args="",
                           fail_on="error", sarif_file="results.sarif")
    assert out == {"exit-code": "1", "sarif-file": "results.sarif"}
    log = json.loads((tmp_path / "results.sarif").read_text())
    assert not list(sarif_schema.iter_errors(log))
    run = log["runs"][0]
    uris = sorted(a["location"]["uri"] for a in run["artifacts"])
    assert uris == ["models/mlp_4096x3.onnx", "models/nonzero_mask.onnx"]  # workspace-relative
    assert "models/nonzero_mask.onnx:/NonZero: error[SHP001]" in step.stdout  # the concise log
    assert not (tmp_path / "results.sarif.tmp").exists()


def test_action_passes_flags_and_fail_on(binary, tmp_path):
    # Without a batch the model's symbolic batch is a note (SHP002): fail-on note fails on it, and
    # `--batch 8` in args (split on spaces) settles it.
    shutil.copy(TESTDATA / "models" / "mlp_4096x3.onnx", tmp_path / "mlp.onnx")
    _, out = run_action(binary, tmp_path, paths="mlp.onnx", fail_on="note", sarif_file="t.sarif")
    rules = [r["ruleId"] for r in json.loads((tmp_path / "t.sarif").read_text())["runs"][0]["results"]]
    assert rules == ["SHP002"] and out["exit-code"] == "1"
    _, out = run_action(binary, tmp_path, paths="mlp.onnx", target="tpu-v6e",
                        args="--batch 8 --train", fail_on="note", sarif_file="t.sarif")
    assert out["exit-code"] == "0"
    assert not json.loads((tmp_path / "t.sarif").read_text())["runs"][0]["results"]


def test_action_on_unreadable_input_writes_no_sarif(binary, tmp_path):
    (tmp_path / "broken.onnx").write_bytes(b"\x08\x07garbage")
    step, out = run_action(binary, tmp_path, paths="broken.onnx", sarif_file="r.sarif")
    assert out == {"exit-code": "2"}
    assert not (tmp_path / "r.sarif").exists() and not (tmp_path / "r.sarif.tmp").exists()
    assert "broken.onnx" in step.stderr


def hook(hook_id):
    return next(h for h in load_yaml(".pre-commit-hooks.yaml") if h["id"] == hook_id)


def run_hook(binary, h, files, cwd):
    """pre-commit runs `entry args... FILES`; tpu-doctor stands for this build's binary."""
    entry = shlex.split(h["entry"])
    assert entry[0] == "tpu-doctor"
    return subprocess.run([binary, *entry[1:], *h.get("args", []), *map(str, files)],
                          capture_output=True, text=True, cwd=cwd)


def test_model_hook_selects_model_files_and_fails_a_blocked_one(binary, tmp_path):
    h = hook("tpu-doctor")
    assert h["language"] == "system"
    pattern = re.compile(h["files"])
    for name in ("a.onnx", "m.pt2", "net.keras", "w.h5", "step.hlo.txt", "jax.mlir", "g.pb"):
        assert pattern.search(name), name
    for name in ("train.py", "README.md", "onnx.py", "data.csv"):
        assert not pattern.search(name), name
    shutil.copy(TESTDATA / "models" / "nonzero_mask.onnx", tmp_path / "nonzero_mask.onnx")
    shutil.copy(TESTDATA / "models" / "mlp_4096x3.onnx", tmp_path / "mlp.onnx")
    blocked = run_hook(binary, h, ["nonzero_mask.onnx", "mlp.onnx"], tmp_path)
    assert blocked.returncode == 1
    assert blocked.stdout.startswith("nonzero_mask.onnx:/NonZero: error[SHP001]")
    assert run_hook(binary, h, ["mlp.onnx"], tmp_path).returncode == 0


def test_script_hook_reports_findings_with_lines(binary, tmp_path):
    h = hook("tpu-doctor-scripts")
    assert set(h["types_or"]) == {"python", "jupyter"}
    shutil.copy(TESTDATA / "scripts/fix/keras_quickstart.py", tmp_path / "train.py")
    out = run_hook(binary, h, ["train.py"], tmp_path)
    assert out.returncode == 0  # warnings do not fail by default ...
    assert re.search(r"^train\.py:\d+:\d+: warning\[PIPE004\]", out.stdout, re.M)
    h = {**h, "args": ["--fail-on", "warning"]}
    assert run_hook(binary, h, ["train.py"], tmp_path).returncode == 1  # ... unless asked
