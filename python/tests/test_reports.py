"""SARIF and HTML reports, checked the way their consumers read them: SARIF against the 2.1.0
structure (python3-jsonschema) plus GitHub code scanning's own requirements, HTML in headless
Chromium (screenshots, console, network)."""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

DATA = pathlib.Path(__file__).parent / "data"
SHOTS = pathlib.Path(os.environ.get("TPUD_SCREENSHOT_DIR", tempfile.gettempdir()))


def run_cli(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, cwd=DATA.parents[2])


@pytest.mark.parametrize(
    "model",
    ["testdata/models/nonzero_mask.onnx", "testdata/pt2/nonzero_mask.pt2", "testdata/rules/TPU001/fires_bitcast_f64_to_s64.mlir"],
)
def test_sarif_of_a_blocked_model_validates(binary, sarif_schema, model):
    out = run_cli(binary, "check", model, "--format", "sarif")
    assert out.returncode == 1, out.stderr  # blocked: findings at error
    log = json.loads(out.stdout)
    errors = sorted(sarif_schema.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]

    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)), "rule ids must be unique"
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    results = run["results"]
    assert results and any(r["level"] == "error" for r in results)
    for r in results:
        # GitHub: ruleId, message text, a repo-relative artifact URI and a region.
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == model
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert loc["region"]["startLine"] >= 1
        assert r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        assert len(r["partialFingerprints"]["tpuDoctorNode/v1"]) == 16


def test_sarif_of_a_folder_is_one_run_github_accepts(binary, sarif_schema, tmp_path):
    # Three models and a script in one folder: one run (GitHub takes at most 20 runs a file and
    # rejects two runs of one tool and category), every file an artifact, results pointing at
    # theirs, an automation id, and within GitHub's limits on results and rules per run.
    folder = tmp_path / "models"
    folder.mkdir()
    root = DATA.parents[2]
    for name in ("nonzero_mask.onnx", "mlp_4096x3.onnx", "f64_mlp.onnx"):
        shutil.copy(root / "testdata/models" / name, folder / name)
    shutil.copy(root / "testdata/scripts/fix/tfdata_pipeline.py", folder / "train.py")
    out = run_cli(binary, "check", str(folder), "--format", "sarif")
    assert out.returncode == 1, out.stderr
    log = json.loads(out.stdout)
    errors = sorted(sarif_schema.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    assert run["automationDetails"]["id"].startswith("tpu-doctor/")
    uris = [a["location"]["uri"] for a in run["artifacts"]]
    assert sorted(os.path.basename(u) for u in uris) == [
        "f64_mlp.onnx", "mlp_4096x3.onnx", "nonzero_mask.onnx", "train.py"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert "PIPE004" in ids and "TPU001" in ids  # script and model rules together
    assert len(run["results"]) <= 25000 and len(rules) <= 25000
    seen = set()
    for r in run["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert uris[loc["index"]] == loc["uri"]
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        seen.add(loc["uri"])
    assert any(u.endswith("nonzero_mask.onnx") for u in seen)
    assert any(u.endswith("train.py") for u in seen)
    verdicts = {os.path.basename(a["location"]["uri"]): a["properties"]["verdict"]
                for a in run["artifacts"]}
    assert verdicts["nonzero_mask.onnx"] == "blocked"


def test_sarif_fingerprints_are_stable(binary):
    a = run_cli(binary, "check", "testdata/models/f64_mlp.onnx", "--format", "sarif").stdout
    b = run_cli(binary, "check", "testdata/models/f64_mlp.onnx", "--format", "sarif").stdout
    assert a == b
    prints = [r["partialFingerprints"] for r in json.loads(a)["runs"][0]["results"]]
    assert len({json.dumps(p) for p in prints}) == len(prints)  # one per finding


def test_sarif_of_a_clean_model_has_no_results(binary, sarif_schema):
    out = run_cli(binary, "check", "testdata/pt2/attention_block.pt2", "--format", "sarif")
    log = json.loads(out.stdout)
    assert not list(sarif_schema.iter_errors(log))
    assert all(r["level"] != "error" for r in log["runs"][0]["results"])


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    pytest.skip("Chromium is not installed (Debian package `chromium`)")


def render_in_chromium(html_path: pathlib.Path, png: pathlib.Path, workdir: pathlib.Path):
    """Screenshot the page; return (chromium's log, the URLs the page itself requested).

    The browser's own background requests (update checks, network time) carry no initiator
    ("not an origin") in the net log; what a page loads carries the page's origin."""
    netlog = workdir / "netlog.json"
    cmd = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", "--hide-scrollbars",
        # Nothing may reach a network even if the page asked: names resolve nowhere.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={workdir / 'profile'}", "--enable-logging=stderr", "--v=0",
        f"--log-net-log={netlog}", "--net-log-capture-mode=Everything",
        "--window-size=1200,1500", f"--screenshot={png}", html_path.as_uri(),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert png.exists() and png.stat().st_size > 10000, out.stderr[-2000:]
    urls = []
    if netlog.exists():
        text = netlog.read_text(errors="replace")
        if not text.rstrip().endswith("}"):  # the log of a killed browser lacks its closing brackets
            text = text.rstrip().rstrip(",") + "]}"
        for event in json.loads(text).get("events", []):
            params = event.get("params", {})
            if params.get("url") and params.get("initiator", "not an origin") != "not an origin":
                urls.append(params["url"])
    return out.stderr, urls


@pytest.mark.parametrize(
    "model,verdict",
    [("testdata/models/nonzero_mask.onnx", "BLOCKED"), ("testdata/models/mlp_4096x3.onnx", "READY")],
)
def test_html_report_in_headless_chromium(binary, model, verdict, tmp_path):
    out = run_cli(binary, "check", model, "--format", "html", "--batch", "8")
    assert out.returncode in (0, 1), out.stderr
    page = out.stdout
    assert page.startswith("<!DOCTYPE html>")
    assert f">{verdict}<" in page
    # Self-contained: no script, no external stylesheet, image or font.
    for banned in ("<script", "<link", "<img", "@import", "url(", "src="):
        assert banned not in page, banned
    html_path = tmp_path / "report.html"
    html_path.write_text(page)
    png = SHOTS / f"tpu-doctor-{verdict.lower()}.png"
    log, urls = render_in_chromium(html_path, png, tmp_path)
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    assert not console, console
    external = [u for u in urls if not u.startswith(("file:", "data:", "about:", "chrome:"))]
    assert not external, external


def test_the_network_check_can_fail(tmp_path):
    # A page that asks for an external image must be caught by render_in_chromium.
    page = tmp_path / "control.html"
    page.write_text(
        "<!DOCTYPE html><html><body><h1>control</h1>"
        + "<p>" + "padding text " * 400 + "</p>"
        + "<img src='http://tpu-doctor-test.invalid/x.png'></body></html>"
    )
    _, urls = render_in_chromium(page, tmp_path / "control.png", tmp_path)
    assert any("tpu-doctor-test.invalid" in u for u in urls), urls


def test_html_escapes_what_comes_from_the_model(binary, tmp_path):
    # A Keras config whose layer name carries markup: it must show as text, never as a tag.
    config = json.loads((DATA.parents[2] / "testdata/keras/kotlindl_lstm_model.json").read_text())
    config["config"]["layers"][0]["config"]["name"] = "<script>alert(1)</script>"
    model = tmp_path / "evil.json"
    model.write_text(json.dumps(config))
    page = run_cli(binary, "check", str(model), "--format", "html").stdout
    assert "<script>" not in page
