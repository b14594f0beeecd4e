"""tpudoctor.plan, check_job and the sharded estimate, against the CLI's answers."""
import json
import os
import subprocess
import sys

import pytest
import tpudoctor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA = os.path.join(ROOT, "examples", "configs", "llama-3.1-8b.json")
BINARY = os.path.join(ROOT, "build", "tpu-doctor")


def test_plan_matches_the_cli_and_emits_files():
    plan = tpudoctor.plan(LLAMA, seq=8192, targets="tpu-v5e", emit=True)
    cli = json.loads(subprocess.run(
        [BINARY, "plan", LLAMA, "--seq", "8192", "--targets", "tpu-v5e", "--format", "json"],
        capture_output=True, text=True, check=True).stdout)
    assert plan["choice"] == cli["choice"]
    assert plan["choice"]["parallel"]["fsdp"] > 1  # 8B with Adam does not fit a v5e data parallel
    assert set(plan["files"]) >= {"vertex_custom_job.yaml", "create_tpu_vm.sh", "train.py"}
    assert plan["choice"]["accelerator_type"] in plan["files"]["create_tpu_vm.sh"]
    assert plan.why == cli["why"] and "per 1M tokens" in plan.why  # every choice says why


def test_plan_of_a_model_given_as_bytes():
    with open(LLAMA, "rb") as f:
        plan = tpudoctor.plan(f.read(), seq=2048, targets=["tpu-v6e"], max_chips=64)
    assert plan["choice"]["generation"] == "tpu-v6e"
    assert plan["choice"]["chips"] <= 64


def test_sharded_estimate():
    sharded = tpudoctor.estimate(LLAMA, seq=8192, batch=1, train=True, targets="v6e-8",
                                 parallel="fsdp=8", remat="offload").estimates[0]
    replicated = tpudoctor.estimate(LLAMA, seq=8192, batch=1, train=True,
                                    targets="v6e-8").estimates[0]
    assert sharded.fits and not replicated.fits
    assert sharded.memory["weights"] * 8 == pytest.approx(replicated.memory["weights"])
    assert any("fsdp=8" in a for a in sharded.assumptions)
    with pytest.raises(tpudoctor.Error, match="does not divide"):
        tpudoctor.estimate(LLAMA, seq=8192, batch=2, targets="v6e-8", parallel="fsdp=16")
    with pytest.raises(tpudoctor.Error, match="remat"):
        tpudoctor.estimate(LLAMA, batch=2, targets="v6e-8", remat="sometimes")


def test_maxtext_remat_policy_by_name():
    # save_dot_except_mlpwi keeps less than dots (not the MLP down-projection's input) and runs
    # the MLP's up-projections again; MaxText's `minimal` is dots.
    def run(remat):
        return tpudoctor.estimate(LLAMA, seq=4096, batch=2, train=True, targets="v5p-64",
                                  parallel="fsdp=32", remat=remat).estimates[0]
    dots, except_mlpwi, minimal = run("dots"), run("save_dot_except_mlpwi"), run("minimal")
    assert except_mlpwi.memory["activations"] < dots.memory["activations"]
    assert except_mlpwi.breakdown["recompute_ms"] > dots.breakdown["recompute_ms"]
    assert minimal.step_time_ms == pytest.approx(dots.step_time_ms)
    assert any("save_dot_except_mlpwi" in a for a in except_mlpwi.assumptions)


def test_context_parallel_estimate():
    # Two devices share each sequence: each holds half its activations, the state is sharded
    # over all eight either way.
    cp = tpudoctor.estimate(LLAMA, seq=8192, batch=1, train=True, targets="v5p-16",
                            parallel="fsdp=4,cp=2", remat="layer").estimates[0]
    fsdp = tpudoctor.estimate(LLAMA, seq=8192, batch=1, train=True, targets="v5p-16",
                              parallel="fsdp=8", remat="layer").estimates[0]
    assert cp.memory["activations"] * 2 == pytest.approx(fsdp.memory["activations"])
    assert cp.memory["weights"] == pytest.approx(fsdp.memory["weights"])
    assert any("context parallelism over 2 devices" in a for a in cp.assumptions)


def test_pipeline_micro_batches_and_distributed_optimizer():
    # A Megatron-style run: 2 stages of 4 interleaved chunks, 8 micro-batches of one sequence
    # per replica (4 replicas on 16 GPUs at tp=2), the optimizer state sharded over them.
    piped = tpudoctor.estimate(LLAMA, seq=2048, batch=1, train=True, targets="h100-16",
                               parallel="tp=2,pp=2,vp=4", micro_batches=8,
                               distributed_optimizer=True).estimates[0]
    assert piped.global_batch == 32
    assert piped.micro_batches == 8
    assert piped.parallel == {"data": 4, "fsdp": 1, "tensor": 2, "pipeline": 2, "virtual_stages": 4}
    assert any("pipeline parallelism over 2 stages" in a for a in piped.assumptions)
    assert any("distributed optimizer" in a for a in piped.assumptions)
    with pytest.raises(tpudoctor.Error, match="train"):
        tpudoctor.estimate(LLAMA, seq=2048, batch=1, targets="h100", micro_batches=2)
    with pytest.raises(tpudoctor.Error, match="layers"):
        tpudoctor.estimate(LLAMA, seq=2048, batch=1, train=True, targets="h100-64",
                           parallel="pp=64")


QWEN_MOE = os.path.join(ROOT, "examples", "configs", "qwen3-30b-a3b.json")


def test_expert_dispatch_options():
    # Qwen3-30B-A3B (8 of 128 experts a token) expert parallel over two hosts of H100s: sending
    # each token once per host and device (DeepEP) moves less over the network than one copy per
    # routed expert; overlapping the exchanges with the other micro-batches' compute shortens the
    # step further.
    def run(**kw):
        return tpudoctor.estimate(QWEN_MOE, seq=4096, batch=1, train=True, targets="h100-16",
                                  parallel="ep=16", micro_batches=4, **kw).estimates[0]
    plain, dedup = run(), run(dedup_expert_dispatch=True)
    both = run(dedup_expert_dispatch=True, overlap_expert_comm=True)
    assert dedup.breakdown["expert_parallel_ms"] < plain.breakdown["expert_parallel_ms"]
    assert both.step_time_ms < dedup.step_time_ms
    assert any("once to each device and host" in a for a in dedup.assumptions)
    with pytest.raises(tpudoctor.Error, match="ep=N"):
        tpudoctor.estimate(QWEN_MOE, seq=4096, batch=1, train=True, targets="h100-16",
                           dedup_expert_dispatch=True)


def test_long_context_options():
    # Llama 3.1 8B at 32k tokens over cp=8 on v5p: a ring holds two chunks of the keys and values
    # instead of the whole sequence's and hides its passes behind the attention; four vocabulary
    # tiles keep a quarter of the logits live.
    def run(**kw):
        return tpudoctor.estimate(LLAMA, seq=32768, batch=1, train=True, targets="v5p-16",
                                  parallel="cp=8", remat="layer", **kw).estimates[0]
    gathered, ring, tiled = run(), run(ring_context=True), run(ring_context=True, vocab_tiles=4)
    assert ring.step_time_ms < gathered.step_time_ms
    assert ring.memory["transients"] < gathered.memory["transients"]
    assert tiled.memory["transients"] < ring.memory["transients"]
    assert any("ring" in a for a in ring.assumptions)
    kept = run(ring_context=True, keep_attention_output=True)
    assert kept.breakdown["recompute_ms"] < ring.breakdown["recompute_ms"]
    with pytest.raises(tpudoctor.Error, match="cp=N"):
        tpudoctor.estimate(LLAMA, seq=2048, batch=1, train=True, targets="v5p-16",
                           ring_context=True)


def test_lora():
    # LoRA on Llama 3.1 8B: only the adapters train (fp32 gradients and Adam's moments), the
    # frozen weights' backward skips their weight gradients.
    def run(**kw):
        return tpudoctor.estimate(LLAMA, seq=2048, batch=1, train=True, targets="h100",
                                  **kw).estimates[0]
    full, lora = run(), run(lora_rank=16, lora_targets="qkv")
    assert lora.memory["gradients"] < 0.01 * full.memory["gradients"]
    assert lora.breakdown["backward_ms"] < full.breakdown["backward_ms"]
    assert any("LoRA of rank 16" in a for a in lora.assumptions)
    with pytest.raises(tpudoctor.Error, match="all, attention or qkv"):
        run(lora_rank=16, lora_targets="mlp")


def test_check_job(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text("workerPoolSpecs:\n  - machineSpec:\n      machineType: cloud-tpu\n"
                   "      acceleratorType: TPU_V5_LITEPOD\n      acceleratorCount: 8\n"
                   "    replicaCount: 1\n")
    result = tpudoctor.check_job(job)
    assert [f["code"] for f in result["findings"]] == ["JOB002"]
    job.write_text("not: [yaml\n")
    with pytest.raises(tpudoctor.Error):
        tpudoctor.check_job(job)


MISTRAL = os.path.join(ROOT, "examples", "configs", "mistral-7b.json")
LLAMA70B = os.path.join(ROOT, "examples", "configs", "llama-3.1-70b.json")


def test_plan_for_a_job_matches_the_cli():
    plan = tpudoctor.plan(MISTRAL, seq=4096, tokens=2e9, deadline_hours=24, fine_tune=True)
    cli = json.loads(subprocess.run(
        [BINARY, "plan", MISTRAL, "--seq", "4096", "--tokens", "2e9", "--deadline", "24",
         "--fine-tune", "--format", "json"], capture_output=True, text=True, check=True).stdout)
    assert plan["job"] == cli["job"]
    assert plan["choice"]["chips"] <= 16 and plan["choice"]["job_hours"] <= 24
    assert "deadline" in plan["job"]["why"]
    with pytest.raises(tpudoctor.Error, match="go together"):
        tpudoctor.plan(MISTRAL, epochs=2)
    with pytest.raises(tpudoctor.Error, match="job's size"):
        tpudoctor.plan(MISTRAL, deadline_hours=3)


def test_serving_estimate_matches_the_cli():
    served = tpudoctor.estimate(LLAMA70B, targets="v6e-8", serve=(1000, 1000, 64)).estimates[0]
    cli = json.loads(subprocess.run(
        [BINARY, "estimate", LLAMA70B, "--serve", "--prompt-tokens", "1000", "--output-tokens",
         "1000", "--concurrency", "64", "--targets", "v6e-8", "--format", "json"],
        capture_output=True, text=True, check=True).stdout)["estimates"][0]
    assert served.serving == cli["serving"]
    assert served.serving["kv_bytes_per_token"] == 80 * 2 * 8 * 128 * 2
    with pytest.raises(tpudoctor.Error, match="inference"):
        tpudoctor.estimate(LLAMA70B, targets="v6e-8", train=True, serve=(10, 10, 1))


def test_weight_only_int8_serves_one_byte_weights_and_refuses_training():
    bf16 = tpudoctor.estimate(LLAMA70B, targets="v6e-8", serve=(1000, 1000, 64)).estimates[0]
    int8w = tpudoctor.estimate(LLAMA70B, targets="v6e-8", precision="int8w",
                               serve=(1000, 1000, 64)).estimates[0]
    assert int8w.serving["weight_bytes_per_chip"] == pytest.approx(
        bf16.serving["weight_bytes_per_chip"] / 2)
    assert any("weight-only int8" in a for a in int8w.assumptions)
    for call in (lambda: tpudoctor.check(LLAMA70B, precision="int8w", train=True),
                 lambda: tpudoctor.estimate(LLAMA70B, targets="v6e-8", precision="int8w",
                                            train=True),
                 lambda: tpudoctor.plan(LLAMA70B, precision="int8w")):
        with pytest.raises(tpudoctor.Error, match="weight-only"):
            call()


def test_fp8_kv_cache_matches_the_cli():
    served = tpudoctor.estimate(LLAMA70B, targets="h200", precision="fp8",
                                serve=(128, 2048, 192), kv_cache_dtype="fp8").estimates[0]
    cli = json.loads(subprocess.run(
        [BINARY, "estimate", LLAMA70B, "--serve", "--prompt-tokens", "128", "--output-tokens",
         "2048", "--concurrency", "192", "--targets", "h200", "--precision", "fp8",
         "--kv-cache-dtype", "fp8", "--format", "json"],
        capture_output=True, text=True, check=True).stdout)["estimates"][0]
    assert served.serving == cli["serving"]
    assert served.serving["kv_bytes_per_token"] == 80 * 2 * 8 * 128 * 1
    with pytest.raises(tpudoctor.Error, match="serving option"):
        tpudoctor.estimate(LLAMA70B, targets="h200", kv_cache_dtype="fp8")
    with pytest.raises(tpudoctor.Error, match="not bf16, fp16, fp8 or int8"):
        tpudoctor.estimate(LLAMA70B, targets="h200", serve=(1, 1, 1), kv_cache_dtype="int4")


def test_static_cache_engine_matches_the_cli():
    # jetstream-pytorch on a v5e-8: a static int8 cache of 2,048 tokens a slot, prefills one at
    # a time padded to their bucket (230 tokens run as 256).
    served = tpudoctor.estimate(LLAMA70B, targets="v5e-8", precision="int8", serve=(230, 200, 16),
                                kv_cache_dtype="int8", kv_cache_length=2048,
                                bucketed_prefill=True).estimates[0]
    cli = json.loads(subprocess.run(
        [BINARY, "estimate", LLAMA70B, "--serve", "--prompt-tokens", "230", "--output-tokens",
         "200", "--concurrency", "16", "--targets", "v5e-8", "--precision", "int8",
         "--kv-cache-dtype", "int8", "--kv-cache-length", "2048", "--bucketed-prefill",
         "--format", "json"], capture_output=True, text=True, check=True).stdout)["estimates"][0]
    assert served.serving == cli["serving"]
    assert served.serving["kv_cache_length"] == 2048 and served.serving["prefill_tokens"] == 256
    assert served.serving["kv_cache_bytes_per_chip"] == 16 * 2048 * 80 * 2 * 8 * 128 / 8
    with pytest.raises(tpudoctor.Error, match="serving option"):
        tpudoctor.estimate(LLAMA70B, targets="v5e-8", kv_cache_length=2048)


def test_results_are_typed():
    plan = tpudoctor.plan(MISTRAL, seq=4096, tokens=2e9, deadline_hours=24, fine_tune=True)
    assert isinstance(plan, tpudoctor.Plan) and isinstance(plan.choice, tpudoctor.SliceChoice)
    assert plan.choice.accelerator_type == plan["choice"]["accelerator_type"]
    assert plan.choice.job_usd == plan["choice"]["job_usd"] and plan.why == plan["job"]["why"]
    assert all(isinstance(c, tpudoctor.SliceChoice) for c in plan.best_per_generation)
    assert repr(plan).startswith(f"<tpudoctor.Plan {MISTRAL!r}: {plan.choice.accelerator_type} (")
    assert plan.to_dict() == json.loads(plan.to_json()) and "files" not in plan

    est = tpudoctor.estimate(LLAMA, seq=2048, batch=1, train=True, targets="v6e-8,v5p-8",
                             parallel="fsdp=4")
    assert isinstance(est, tpudoctor.EstimateReport)
    assert [e.target for e in est] == ["v6e-8", "v5p-8"] and len(est) == 2
    assert est["v5p-8"] is est.estimates[1]
    with pytest.raises(KeyError):
        est["tpu-v4"]
    assert repr(est).startswith("<tpudoctor.EstimateReport") and "ms/step" in repr(est)
    assert str(est) == est.estimate_text()


def test_check_job_says_what_batch_the_model_was_judged_at():
    job = os.path.join(ROOT, "testdata", "jobs", "vertex_batch_size_flag.yaml")
    resnet = os.path.join(ROOT, "examples", "resnet50.onnx")
    report = tpudoctor.check_job(job, resnet)
    assert isinstance(report, tpudoctor.JobReport)
    assert report.model["batch_per_device"] == 128  # --batch_size=1024 over 8 chips
    assert "as a global batch" in report.model["batch_from"]
    assert report.verdict == "ready" and report.accelerator_type == "v5litepod-8"
    assert report.to_text().splitlines()[1].startswith("model: ")
    assert tpudoctor.check_job(job, resnet, batch=8).model == {
        "path": resnet, "batch_per_device": 8, "batch_from": "--batch"}
    cli = subprocess.run([BINARY, "check", "--job", job, resnet, "--train", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    assert report.to_dict() == json.loads(cli)

    mlp = os.path.join(ROOT, "testdata", "models", "mlp_4096x3.onnx")
    unsized = tpudoctor.check_job(os.path.join(ROOT, "testdata", "jobs", "vertex_no_batch.yaml"), mlp)
    assert [(f.code, f.severity) for f in unsized.findings] == [("JOB008", "note")]
    assert "was not checked" in unsized.findings[0].message and unsized.notes == 1
    assert repr(unsized).endswith(": ready (0 errors, 0 warnings, 1 note)>")


@pytest.mark.parametrize("framework,model,seq,targets", [
    ("jax", LLAMA, 2048, "tpu-v6e"),
    ("pytorch", LLAMA70B, 2048, "tpu-v6e"),  # only fits sharded: FSDP, built on CPU, optimizer.step()
    ("pytorch", os.path.join(ROOT, "examples", "resnet50.onnx"), None, "tpu-v5e"),
    ("tensorflow", os.path.join(ROOT, "examples", "configs", "bert-base-uncased.json"), 128, "tpu-v3"),
])
def test_emitted_training_scripts_compile_and_pass_check(tmp_path, framework, model, seq, targets):
    # Every train.py plan writes is valid Python (py_compile) and passes tpu-doctor's own script
    # checker with no error and no warning.
    plan = tpudoctor.plan(model, seq=seq, targets=targets, emit=True, framework=framework,
                          max_chips=4 if targets == "tpu-v3" else 256)
    script = tmp_path / "train.py"
    script.write_text(plan.files["train.py"])
    compiled = subprocess.run([sys.executable, "-m", "py_compile", str(script)],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    report = tpudoctor.check(str(script))
    assert report.errors == 0 and report.warnings == 0, [str(f) for f in report.findings]
