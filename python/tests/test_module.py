"""The tpudoctor Python module: every input kind this machine can produce, typed results, one
exception type, nothing printed, and agreement with the CLI of the same build."""

import json
import os
import subprocess
import sys

import pytest

import tpudoctor


def test_imported_from_this_build_without_setting_paths():
    # scripts/install_python.sh put a .pth in site-packages; no PYTHONPATH is needed.
    out = subprocess.run(
        [sys.executable, "-c", "import tpudoctor, os; print(os.path.dirname(tpudoctor.__file__))"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        check=True,
    )
    built = os.environ.get("TPUD_BUILD_PY")
    if built:
        assert os.path.realpath(out.stdout.strip()) == os.path.realpath(
            os.path.join(built, "tpudoctor")
        )


@pytest.mark.parametrize(
    "rel,verdict",
    [
        ("models/f64_mlp.onnx", "runs with warnings"),  # ONNX (float64: float32 pairs on TPU)
        ("models/nonzero_mask.onnx", "blocked"),
        ("models/resnet50.onnx", "ready"),
        ("pt2/mlp_static.pt2", "runs with warnings"),  # torch.export (batch 7: PERF003)
        ("pt2/nonzero_mask.pt2", "blocked"),
        ("keras/seed_float64_custom.keras", "runs with warnings"),  # Keras 3 archive
        ("keras/kotlindl_lstm_model.json", "ready"),  # Keras JSON config
        ("jax/f64_mlp.hlo.txt", "runs with warnings"),  # HLO text
        ("rules/TPU001/fires_bitcast_f64_to_s64.mlir", "blocked"),  # StableHLO, a 64-bit gap
        ("jax/f64_mlp.stablehlo.mlir", "runs with warnings"),  # StableHLO
        ("tf/serving_half_plus_two_tf2_cpu", "ready"),  # SavedModel folder
        ("tfdata/seed_pipeline.pbtxt", "blocked"),  # tf.data graph
    ],
)
def test_every_file_format(testdata, rel, verdict):
    report = tpudoctor.check(str(testdata / rel))
    assert report.verdict == verdict, [str(f) for f in report.findings]
    assert report.blocked == (verdict == "blocked")
    assert all(isinstance(f, tpudoctor.Finding) for f in report.findings)


def test_path_objects_bytes_and_text(testdata):
    path = testdata / "models" / "f64_mlp.onnx"
    by_path = tpudoctor.check(path)
    by_bytes = tpudoctor.check(path.read_bytes())
    assert by_path.verdict == by_bytes.verdict == "runs with warnings"
    assert [f.code for f in by_path.findings] == [f.code for f in by_bytes.findings]
    hlo_text = (testdata / "jax" / "f64_mlp.hlo.txt").read_text()
    assert tpudoctor.check(hlo_text).verdict == "runs with warnings"


def test_keras_json_string(testdata):
    config = (testdata / "keras" / "kotlindl_lstm_model.json").read_text()
    report = tpudoctor.check(config)
    assert report.format.startswith("keras")
    assert report.verdict == "ready"


def test_legacy_h5_goes_through_h5py_not_a_fork(testdata):
    pytest.importorskip("h5py")
    report = tpudoctor.check(testdata / "keras" / "seed_float64_custom_varlen.h5")
    assert report.verdict == "runs with warnings"
    assert any(f.code == "TPU002" for f in report.findings)
    with pytest.raises(tpudoctor.Error):
        tpudoctor.check(testdata / "keras" / "bad_hdf5_overflow.h5")


def test_hostile_files_raise_the_error_and_keep_the_interpreter(testdata):
    # Damaged .h5 files that make libhdf5 allocate gigabytes (read in a limited child), and an
    # ONNX file libonnx's shape inference crashed on (now answered), in this very process.
    pytest.importorskip("h5py")
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for name in ("h5mut_1047.h5", "h5mut_1655.h5", "h5mut_520.h5", "h5mut_621.h5"):
        with pytest.raises(tpudoctor.Error):
            tpudoctor.check(testdata / "repro" / name)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 * 1024
    crashed_libonnx = (testdata / "repro" / "onnx_shapeinfer_segv.onnx").read_bytes()
    assert tpudoctor.check(crashed_libonnx).verdict == "blocked"
    for name in ("yaml_billion_laughs_maxtext.yml", "negative_dim.onnx", "huge_dim.hlo"):
        with pytest.raises(tpudoctor.Error):
            tpudoctor.check(testdata / "repro" / name)


def test_typed_findings_and_estimate(testdata):
    report = tpudoctor.check(testdata / "models" / "f64_mlp.onnx", batch=8)
    first = report.findings[0]
    assert first.code == "TPU002" and first.severity == "warning"
    assert first.location.value
    assert any(n.startswith("behaviour applied: PyTorch/XLA") for n in first.notes)
    assert first.fix is None or first.fix.applicability in ("safe", "unsafe", "display-only")
    assert report.warnings >= 1
    assert isinstance(report.estimate, tpudoctor.Estimate)
    assert report.estimate.target == "tpu-v5e"
    assert report.estimate.peak_memory_bytes > 0


def test_to_dict_to_json_and_text_match_the_cli(testdata, binary):
    model = str(testdata / "models" / "nonzero_mask.onnx")
    report = tpudoctor.check(model)
    cli = subprocess.run([binary, "check", model, "--format", "json"], capture_output=True, text=True)
    assert report.to_json() == cli.stdout
    assert report.to_dict() == json.loads(cli.stdout)
    cli_text = subprocess.run([binary, "check", model], capture_output=True, text=True).stdout
    assert str(report) == cli_text


def test_model_facts(testdata):
    static = tpudoctor.check(testdata / "models" / "resnet50_b64_static.onnx", batch=8)
    assert (static.batch, static.batch_source, static.framework) == (64, "model", "pytorch")
    flagged = tpudoctor.check(testdata / "models" / "resnet50.onnx", batch=16)
    assert (flagged.batch, flagged.batch_source) == (16, "flag")
    hlo = tpudoctor.check(testdata / "jax" / "f64_mlp.hlo.txt")
    # The batch of a compiled program is read off its data parameter (x: f32[32,512]).
    assert hlo.xla_program and hlo.framework == "jax" and (hlo.batch, hlo.batch_source) == (32, "model")


def test_estimate_several_targets(testdata, binary):
    model = str(testdata / "models" / "resnet50.onnx")
    report = tpudoctor.estimate(model, batch=32, train=True, targets=["tpu-v5e-8", "nvidia-h100"])
    assert [e.target for e in report.estimates] == ["tpu-v5e-8", "nvidia-h100"]
    assert report.estimates[0].chips == 8
    assert all(e.step_time_ms > 0 and e.samples_per_s > 0 for e in report.estimates)
    cli = subprocess.run(
        [binary, "estimate", model, "--batch", "32", "--train", "--targets", "tpu-v5e-8,nvidia-h100",
         "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    expected = json.loads(cli.stdout)["estimates"]
    assert [e.samples_per_s for e in report.estimates] == [e["samples_per_s"] for e in expected]


def test_estimate_google_cloud_names_and_prices(testdata):
    model = str(testdata / "models" / "resnet50.onnx")
    report = tpudoctor.estimate(model, batch=32, targets="v6e-8,v5litepod-8", prices={"v5e": 0.6})
    v6e, v5e = report.estimates
    assert (v6e.target, v6e.chips, v5e.chips) == ("v6e-8", 8, 8)
    assert v5e.usd_per_hour == pytest.approx(0.6 * 8)
    assert v6e.usd_per_hour == pytest.approx(2.7 * 8)
    with pytest.raises(tpudoctor.Error, match="prices"):
        tpudoctor.estimate(model, batch=32, prices={"v9": 1.0})


def test_estimate_runtime(testdata):
    model = str(testdata / "models" / "resnet50.onnx")
    eager = tpudoctor.estimate(model, batch=32, targets="nvidia-h100").estimates[0]
    fused = tpudoctor.estimate(model, batch=32, targets="nvidia-h100", runtime="compiled").estimates[0]
    assert (eager.runtime, fused.runtime) == ("eager", "compiled")
    assert 0 < fused.kernels < eager.kernels
    with pytest.raises(tpudoctor.Error, match="runtime"):
        tpudoctor.estimate(model, batch=32, runtime="jit")


def test_estimate_channels_last(testdata):
    # NHWC convolutions take the tensor cores at the fp16 rate: the step is shorter, and says why.
    model = str(testdata / "models" / "resnet50.onnx")
    nchw = tpudoctor.estimate(model, batch=64, targets="a100-80gb", precision="fp16").estimates[0]
    nhwc = tpudoctor.estimate(model, batch=64, targets="a100-80gb", precision="fp16",
                              channels_last=True).estimates[0]
    assert nhwc.step_time_ms < nchw.step_time_ms
    assert any("channels-last (NHWC" in a for a in nhwc.assumptions)
    assert any("NCHW" in a for a in nchw.assumptions)


def test_estimate_moe_capacity_factor(testdata):
    # A small MoE config: capacity dispatch adds the one-hot matmuls and pads the experts, so the
    # same step takes longer; a factor out of range is an error.
    config = ('{"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", '
              '"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, '
              '"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, '
              '"num_local_experts": 4, "num_experts_per_tok": 2}')
    dropless = tpudoctor.estimate(config, seq=64, input_format="config").estimates[0]
    dense = tpudoctor.estimate(config, seq=64, input_format="config",
                               moe_capacity_factor=1.25).estimates[0]
    assert dense.step_time_ms > dropless.step_time_ms
    with pytest.raises(tpudoctor.Error, match="moe_capacity_factor"):
        tpudoctor.estimate(config, seq=64, input_format="config", moe_capacity_factor=0)


def test_estimate_attention_kernel():
    # An MPT config at 8k tokens on an A100: FlashAttention (1) runs the attention at about half
    # FlashAttention-2's rate, so the step is longer and says which kernel; a Hopper-only kernel
    # on an A100 is an error.
    config = ('{"model_type": "mpt", "d_model": 512, "n_heads": 4, "n_layers": 2, '
              '"max_seq_len": 8192, "vocab_size": 1000}')
    fa1, fa2 = (tpudoctor.estimate(config, seq=8192, input_format="config", targets="nvidia-a100",
                                   attention_kernel=k).estimates[0]
                for k in ("flash-attention-1", "flash-attention-2"))
    assert fa1.step_time_ms > fa2.step_time_ms
    assert any("flash-attention-1's kernels at 0.33" in a for a in fa1.assumptions)
    with pytest.raises(tpudoctor.Error, match="flash-attention-3"):
        tpudoctor.estimate(config, seq=8192, input_format="config", targets="nvidia-a100",
                           attention_kernel="flash-attention-3")


def test_estimate_offline_job():
    # 100 requests, 64 in flight: a wave of 64 and one of 36, slower than the steady rate; a
    # job's requests without serve is an error.
    config = ('{"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, '
              '"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, '
              '"vocab_size": 1000}')
    steady = tpudoctor.estimate(config, input_format="config", targets="nvidia-h100",
                                serve=(128, 128, 64)).estimates[0].serving
    job = tpudoctor.estimate(config, input_format="config", targets="nvidia-h100",
                             serve=(128, 128, 64), requests=100).estimates[0].serving
    assert (job["requests"], job["waves"]) == (100, 2)
    assert job["output_tokens_per_s"] < steady["output_tokens_per_s"]
    assert job["job_s"] == pytest.approx(100 * 128 / job["output_tokens_per_s"])
    with pytest.raises(tpudoctor.Error, match="requests"):
        tpudoctor.estimate(config, input_format="config", targets="nvidia-h100", requests=10)


def test_estimate_of_a_symbolic_model_without_batch_raises(testdata):
    with pytest.raises(tpudoctor.Error, match="--batch"):
        tpudoctor.estimate(testdata / "models" / "resnet50.onnx")


def test_select_and_ignore(testdata):
    path = testdata / "models" / "f64_mlp.onnx"
    assert all(f.code != "TPU002" for f in tpudoctor.check(path, ignore=["TPU002"]).findings)
    selected = tpudoctor.check(path, select="tpu")
    assert selected.findings and all(f.code.startswith("TPU") for f in selected.findings)


def test_live_torch_module():
    torch = pytest.importorskip("torch")

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(256, 512)
            self.b = torch.nn.Linear(512, 128)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    report = tpudoctor.check(Mlp(), torch.randn(16, 256))
    assert report.verdict == "ready", [str(f) for f in report.findings]
    assert report.estimate is not None

    # float64: PyTorch/XLA keeps it F64, which XLA:TPU computes as float32 pairs.
    double = tpudoctor.check(Mlp().double(), torch.randn(16, 256, dtype=torch.float64))
    assert double.verdict == "runs with warnings"
    assert any(f.code == "TPU002" and "float64" in f.message for f in double.findings)


def test_live_torch_module_with_data_dependent_shape():
    torch = pytest.importorskip("torch")

    class Masked(torch.nn.Module):
        def forward(self, x):
            return x[x > 0].sum()

    report = tpudoctor.check(Masked(), torch.randn(8, 8))
    assert report.verdict == "blocked"
    assert any(f.code == "SHP001" for f in report.findings)


def test_live_torch_module_findings_point_at_the_model_line(capfd):
    # torch 1.13's exporter records each node's Python stack (verbose=True, into doc_string); the
    # finding names the `.double()` line of forward(), and nothing is printed.
    torch = pytest.importorskip("torch")

    class Widen(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(16, 16)

        def forward(self, x):
            return self.a(x).double().sum()  # the line the finding must name

    report = tpudoctor.check(Widen(), torch.randn(4, 16))
    line = next(i for i, text in enumerate(open(__file__), 1) if "the line the finding must" in text)
    f64 = [f for f in report.findings if "float64" in f.message]
    assert f64, [str(f) for f in report.findings]
    assert (f64[0].location.file, f64[0].location.line) == (__file__, line)
    out, err = capfd.readouterr()
    assert out == "" and err == "", (out[:200], err[:200])


def test_torch_module_needs_example_inputs():
    torch = pytest.importorskip("torch")
    with pytest.raises(tpudoctor.Error, match="example inputs"):
        tpudoctor.check(torch.nn.Linear(4, 4))


def test_jax_and_tf_objects_need_the_device_machine():
    for name in ("jax", "tensorflow"):
        try:
            __import__(name)
        except ImportError:
            continue
        pytest.fail(f"{name} is installed here: extend these tests to run its objects")
    pytest.skip("JAX and TensorFlow are not Debian packages; their objects are tested where installed")


def test_logs_text_and_paths(testdata):
    by_path = tpudoctor.logs(testdata / "logs" / "hbm_oom_v6e.log")
    assert by_path.root_cause.category == "hbm_oom"
    text = (testdata / "logs" / "hbm_oom_v6e.log").read_text()
    by_text = tpudoctor.logs(text)
    assert by_text.root_cause.category == "hbm_oom"
    assert by_text.root_cause.evidence
    healthy = tpudoctor.logs((testdata / "logs" / "clean.log").read_text())
    assert healthy.root_cause is None
    assert by_text.root_cause.layer == "signature"
    # No signature knows it, but the run failed: the scored layer's category and confidence.
    guess = tpudoctor.logs("     Shape: f32[246534,1280]{1,0:T(8,128)}\n"
                           "     Unpadded size: 1.17G\n")
    assert guess.root_cause.layer == "fallback"
    assert guess.root_cause.category == "hbm_oom"
    assert 0 < guess.root_cause.confidence <= 1
    # With its allocation type, the TPU compiler's memory report: the catalogue's message.
    report = tpudoctor.logs("     Unpadded size: 1.17G\n     Allocation type: HLO temp\n")
    assert report.root_cause.layer == "catalogue"
    assert report.root_cause.category == "hbm_oom"


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x00\x01\x02 not a model",
        "testdata/does/not/exist.onnx",
        "bad_truncated",
        12345,
    ],
)
def test_bad_input_raises_one_error_type_with_one_line(bad, testdata):
    if bad == "bad_truncated":
        bad = testdata / "models" / ".." / "bad" / "truncated.onnx"
    with pytest.raises(tpudoctor.Error) as info:
        tpudoctor.check(bad)
    assert "\n" not in str(info.value)
    assert str(info.value)


def test_bad_options_raise_error(testdata):
    path = testdata / "models" / "resnet50.onnx"
    for kwargs in ({"target": "tpu-v99"}, {"batch": 0}, {"optimizer": "rmsprop"}, {"batch": "8"}):
        with pytest.raises(tpudoctor.Error):
            tpudoctor.check(path, **kwargs)


def test_nothing_is_printed(testdata, capfd):
    tpudoctor.check(testdata / "models" / "f64_mlp.onnx")
    tpudoctor.logs(testdata / "logs" / "hbm_oom_v6e.log")
    with pytest.raises(tpudoctor.Error):
        tpudoctor.check(b"junk")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_rules_targets_and_example():
    codes = [code for code, _, _ in tpudoctor.rules()]
    assert codes == sorted(codes) and "TPU001" in codes
    assert "## How to fix" in tpudoctor.rule("tpu001")
    assert any(t["name"] == "tpu-v5e" for t in tpudoctor.targets())
    assert tpudoctor.check(tpudoctor.example()).verdict == "ready"


def test_notebook_html(testdata):
    report = tpudoctor.check(testdata / "models" / "nonzero_mask.onnx")
    fragment = report._repr_html_()
    assert "BLOCKED" in fragment and "<html" not in fragment
    assert report.to_html().startswith("<!DOCTYPE html>")


def test_bash_completion_completes_commands_flags_and_values(binary):
    # The script `tpu-doctor completion bash` prints, loaded into bash and asked what it offers.
    import shutil as _shutil
    import subprocess as _subprocess
    if _shutil.which("bash") is None:
        import pytest as _pytest
        _pytest.skip("no bash")
    cases = {
        "chec": "check",
        "check --form": "--format",
        "check --format con": "concise",
        "check --target tpu-v6": "tpu-v6e",
        "estimate --targets nvidia-h1": "nvidia-h100",
        "plan --framework py": "pytorch",
    }
    script = f'source <("{binary}" completion bash)\n'
    for typed in cases:
        script += (
            f'read -ra W <<< "tpu-doctor {typed}"; COMP_WORDS=("${{W[@]}}"); '
            'COMP_CWORD=$((${#W[@]}-1)); COMPREPLY=(); _tpu_doctor; echo "${COMPREPLY[*]}"\n'
        )
    out = _subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(cases)
    for (typed, want), got in zip(cases.items(), lines):
        assert want in got.split(), (typed, got)
