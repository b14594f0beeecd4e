"""tpu-doctor for Python: will this model run on a Cloud TPU, how fast, at what cost — and why did
that TPU run die?

    import tpudoctor
    report = tpudoctor.check("model.onnx", target="tpu-v5e", batch=8)
    report.verdict            # "ready", "runs with warnings" or "blocked"
    for f in report.findings:
        print(f.code, f.severity, f.message)

    report = tpudoctor.check(torch_module, example_input)   # exported in process
    est = tpudoctor.estimate("model.onnx", batch=64, train=True, targets=["tpu-v5e-8", "nvidia-h100"])
    est.estimates[0].samples_per_s
    tpudoctor.logs("worker-0.log").root_cause.category

Every function raises tpudoctor.Error (a ValueError) with a one-line message when its input cannot
be read; none of them prints. See docs/python.md.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._inputs import resolve
from ._report import (
    Estimate,
    EstimateReport,
    Evidence,
    Finding,
    Fix,
    JobFinding,
    JobReport,
    Location,
    LogCause,
    LogReport,
    Plan,
    Report,
    SliceChoice,
)

__all__ = [
    "Error",
    "Estimate",
    "EstimateReport",
    "Evidence",
    "Finding",
    "Fix",
    "JobFinding",
    "JobReport",
    "Location",
    "LogCause",
    "LogReport",
    "Plan",
    "Report",
    "SliceChoice",
    "check",
    "check_job",
    "estimate",
    "example",
    "logs",
    "plan",
    "rule",
    "rules",
    "targets",
]

__version__: str = _core.version

Error = _core.Error
Error.__module__ = "tpudoctor"
Error.__doc__ = "Raised with a one-line message when an input cannot be analysed."


def check(
    obj: Any,
    *example_inputs: Any,
    target: str = "tpu-v5e",
    batch: Optional[int] = None,
    dims: Optional[Mapping[str, int]] = None,
    train: bool = False,
    optimizer: str = "adam",
    precision: str = "bf16",
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    input_format: Optional[str] = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
) -> Report:
    """Verdict and findings for a model on `target` (what `tpu-doctor check` prints).

    `obj` is a path (ONNX, .pt2, Keras .keras/.h5/JSON, SavedModel folder, GraphDef, HLO text,
    StableHLO text, or a Python training script `.py` / notebook `.ipynb`), model bytes or text, a
    torch.nn.Module or jitted JAX function (give example inputs after it), a Keras model, or a
    tf.data.Dataset. `batch` and `dims` make symbolic dims static; `train` makes the memory rules
    count a training step; `select`/`ignore` take rule codes or prefixes ("PERF", "TPU003").

    For a script, `fix=True` applies the safe fixes to the file in place (atomically: a temporary
    renamed over it) and returns the report of the fixed file; `unsafe_fixes=True` also applies
    the fixes that change numerics (float64 -> float32).
    """
    args = _args(target, batch, dims, train, optimizer, precision, select, ignore)
    if fix or unsafe_fixes:
        if not fix:
            raise Error("unsafe_fixes=True goes with fix=True")
        return _fix_script(obj, args, unsafe_fixes)
    return Report(_analyze(obj, example_inputs, input_format, args))


def _fix_script(obj, args, unsafe: bool) -> Report:
    if not isinstance(obj, (str, os.PathLike)):
        raise Error("fix= takes the path of a Python script or notebook")
    path = os.fspath(obj)
    if os.path.islink(path):
        raise Error(f"{path} is a symlink; fix the file it points to")
    fixed, applied, unsafe_left, report = _core.fix_script_path(path, args, unsafe)
    with open(path, "rb") as f:
        before = f.read()
    if fixed != before:
        folder = os.path.dirname(os.path.abspath(path))
        mode = os.stat(path).st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(prefix=".tpudoctor-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(fixed)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    result = Report(report)
    result.fixes_applied = applied
    result.unsafe_fixes_left = unsafe_left
    return result


def estimate(
    obj: Any,
    *example_inputs: Any,
    targets: Union[str, Sequence[str]] = ("tpu-v5e",),
    batch: Optional[int] = None,
    dims: Optional[Mapping[str, int]] = None,
    train: bool = False,
    optimizer: str = "adam",
    precision: str = "bf16",
    dataset_size: Optional[float] = None,
    input_format: Optional[str] = None,
    prices: Optional[Mapping[str, float]] = None,
    seq: Optional[int] = None,
    parallel: Optional[str] = None,
    remat: str = "none",
    runtime: str = "auto",
    serve: Optional[Tuple[int, int, int]] = None,
    moe_capacity_factor: Optional[float] = None,
    kv_cache_dtype: Optional[str] = None,
    channels_last: bool = False,
    attention_kernel: Optional[str] = None,
    kv_reads_per_query_head: bool = False,
    micro_batches: int = 1,
    distributed_optimizer: bool = False,
    dedup_expert_dispatch: bool = False,
    overlap_expert_comm: bool = False,
    ring_context: bool = False,
    vocab_tiles: int = 1,
    keep_attention_output: bool = False,
    lora_rank: int = 0,
    lora_targets: str = "all",
    kv_cache_length: int = 0,
    bucketed_prefill: bool = False,
    replicated_prefill: bool = False,
    requests: int = 0,
) -> EstimateReport:
    """Memory, step time, throughput and cost per target (what `tpu-doctor estimate` prints).

    Returns an EstimateReport (a Report) whose `estimates` has one Estimate per target ("tpu-v5e-8" and Google Cloud's
    "v5litepod-8" are slices of 8 chips). `prices` replaces list prices, USD per chip-hour
    ({"tpu-v5e": 0.84} for a committed-use discount). `seq` is the sequence length of a model
    config; `parallel` ("fsdp=16,tp=4", "tp=4,pp=8,vp=5") and `remat` ("none", "dots", "layer",
    "offload", MaxText's "save_dot_except_mlpwi") say how each slice shares the step
    (docs/plan.md); `micro_batches` splits each
    replica's training step into that many micro-batches of `batch` (gradient accumulation, a
    pipeline's micro-batches; `--micro-batches`) and `distributed_optimizer` shards the optimizer
    state over the data replicas as Megatron-core does (`--distributed-optimizer`);
    `dedup_expert_dispatch` sends an MoE token to each device and host once, however many of its
    experts they hold (DeepEP, HybridEP; `--dedup-expert-dispatch`), and `overlap_expert_comm`
    runs each micro-batch's expert all-to-alls beside another's compute (`--overlap-expert-comm`),
    both with `parallel` "ep=N"; `ring_context` passes context parallelism's keys and values
    around a ring beside the attention instead of gathering them whole (`--ring-context`, with
    "cp=N"), `vocab_tiles` computes the loss head's logits in that many chunks of tokens
    (`--vocab-tiles`, MaxText's num_vocab_tiling), `keep_attention_output` keeps each layer's
    attention output under `remat` "layer" or "offload" so the recomputed forward skips the
    attention (`--keep-attention-output`); `lora_rank` trains rank-R LoRA adapters on the
    layers' dense weight matmuls with the weights frozen (`--lora`), `lora_targets` ("all",
    "attention", "qkv") which of them (`--lora-targets`); `runtime` ("auto", "eager", "xla", "compiled") how
    the program runs on a GPU (docs/cost-model.md; TPUs always run XLA), `channels_last` that it
    runs its convolutions in NHWC (`--channels-last`), `attention_kernel` ("flash-attention-1",
    "flash-attention-2", "flash-attention-3", "cudnn") the fused attention kernel a GPU runs, at
    the share of the peak the target lists for it (`--attention-kernel`). `serve=(prompt_tokens,
    output_tokens, concurrency)` estimates serving a decoder LLM instead (each Estimate's
    `serving`: TTFT, TPOT, tokens/s per chip, $ per 1M output tokens, KV cache; docs/cost-model.md,
    "Serving"); `kv_cache_dtype` ("bf16", "fp16", "fp8", "int8") holds its KV cache in another dtype than
    the compute dtype (`--kv-cache-dtype`); `kv_reads_per_query_head` models a pre-XQA decode
    kernel that reads a grouped-query layer's cache once per query head
    (`--kv-reads-per-query-head`); `kv_cache_length` gives every sequence slot a static cache of
    that many tokens that each decode step reads whole (`--kv-cache-length`, jetstream-pytorch's
    max_cache_length) and `bucketed_prefill` prefills one prompt at a time padded to the next
    power of two (`--bucketed-prefill`, JetStream's buckets); `replicated_prefill` makes the
    data-parallel replicas one server whose prefills run on all of them, one stream for the slice
    (`--replicated-prefill`, jetstream-pytorch's shard_on_batch); `requests` makes it an offline
    job of that many requests queued at once, run `concurrency` at a time in waves, its
    throughput the whole job's (`--requests`, trtllm-bench's dataset, vLLM's --num-prompts). `moe_capacity_factor` builds an MoE config's experts with capacity dispatch
    (`--moe-capacity-factor`, docs/plan.md "MoE dispatch"). Raises Error when the model cannot be
    estimated (a symbolic dim without `batch`/`dims`).
    """
    if seq is not None:
        dims = {**(dims or {}), "seq": int(seq)}
    args = _args(
        targets[0] if isinstance(targets, (list, tuple)) and targets else "tpu-v5e",
        batch, dims, train, optimizer, precision, (), (),
    )
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    if not targets:
        raise Error("estimate needs at least one target")
    args.target = targets[0]  # the check half runs on one chip of it
    args.estimate_targets = list(targets)
    if dataset_size is not None:
        args.dataset_size = float(dataset_size)
    if prices:
        args.prices = {str(k): float(v) for k, v in prices.items()}
    if parallel:
        args.parallel = str(parallel)
    args.remat = str(remat)
    args.runtime = str(runtime)
    args.channels_last = bool(channels_last)
    if attention_kernel:
        args.attention_kernel = str(attention_kernel)
    args.micro_batches = int(micro_batches)
    args.distributed_optimizer = bool(distributed_optimizer)
    args.dedup_expert_dispatch = bool(dedup_expert_dispatch)
    args.overlap_expert_comm = bool(overlap_expert_comm)
    args.ring_context = bool(ring_context)
    args.vocab_tiles = int(vocab_tiles)
    args.keep_attention_output = bool(keep_attention_output)
    args.lora_rank = int(lora_rank)
    args.lora_targets = str(lora_targets)
    if moe_capacity_factor is not None:
        args.moe_capacity_factor = float(moe_capacity_factor)
    if serve is not None:
        prompt, output, concurrency = serve
        args.serve = (int(prompt), int(output), int(concurrency))
    if kv_cache_dtype is not None:
        args.kv_cache_dtype = str(kv_cache_dtype)
    args.kv_reads_per_query_head = bool(kv_reads_per_query_head)
    args.kv_cache_length = int(kv_cache_length)
    args.bucketed_prefill = bool(bucketed_prefill)
    args.replicated_prefill = bool(replicated_prefill)
    args.requests = int(requests)
    native = _analyze(obj, example_inputs, input_format, args)
    if not native.estimate_count:
        raise Error(native.estimate_unavailable)
    return EstimateReport(native)


def plan(
    obj: Any,
    *example_inputs: Any,
    seq: Optional[int] = None,
    dims: Optional[Mapping[str, int]] = None,
    targets: Union[str, Sequence[str]] = (),
    max_chips: int = 256,
    budget: Optional[float] = None,
    global_batch: Optional[int] = None,
    objective: str = "cost",
    train: bool = True,
    optimizer: str = "adam",
    precision: str = "bf16",
    emit: bool = False,
    framework: Optional[str] = None,
    input_format: Optional[str] = None,
    tokens: Optional[float] = None,
    epochs: Optional[float] = None,
    dataset_size: Optional[float] = None,
    deadline_hours: Optional[float] = None,
    fine_tune: bool = False,
    moe_capacity_factor: Optional[float] = None,
) -> Plan:
    """The TPU slice, per-chip batch, parallelism and remat to train `obj` on (`tpu-doctor plan`).

    Returns a Plan: `choice` (a SliceChoice), `best_per_generation`, `runner_ups`, ...; it reads
    also as the JSON of `tpu-doctor plan --format json` (`plan["choice"]`). With `emit=True`,
    `files` has the Vertex AI, gcloud, GKE and training-script files for the choice, name → text
    (nothing is written). A job — `tokens`, or `epochs` with `dataset_size` (samples), and
    `deadline_hours` — ranks slices by what the job costs, drops those that would not finish, and
    explains the choice (`why`); `fine_tune` keeps a fine-tune's global batch.
    `moe_capacity_factor`: as in `estimate`.
    """
    a = _core.PlanArgs()
    dims = dict(dims or {})
    if seq is not None:
        dims["seq"] = int(seq)
    a.dims = {str(k): int(v) for k, v in dims.items()}
    if moe_capacity_factor is not None:
        a.moe_capacity_factor = float(moe_capacity_factor)
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    a.targets = list(targets)
    a.max_chips = int(max_chips)
    if budget is not None:
        a.budget = float(budget)
    if global_batch is not None:
        a.global_batch = int(global_batch)
    a.objective = objective
    a.train = bool(train)
    a.optimizer = optimizer
    a.precision = precision
    a.emit = bool(emit)
    a.framework = framework or ""
    if (epochs is None) != (dataset_size is None):
        raise Error("epochs and dataset_size go together (the job is epochs x samples)")
    if tokens is not None:
        a.tokens = float(tokens)
    if epochs is not None:
        a.samples = float(epochs) * float(dataset_size)
    if deadline_hours is not None:
        a.deadline_hours = float(deadline_hours)
    a.fine_tune = bool(fine_tune)
    model = resolve(obj, example_inputs, input_format)
    a.input_format = model.input_format
    if model.path is not None:
        text, files = _core.plan_path(model.path, a)
    else:
        text, files = _core.plan_bytes(model.data, model.name, a)
    return Plan(text, dict(files) if emit else None)


def check_job(job: Union[str, os.PathLike], model: Optional[Union[str, os.PathLike]] = None,
              train: bool = True, batch: Optional[int] = None) -> JobReport:
    """JOB findings for a Vertex AI CustomJob spec, GKE manifest or launch script (`check --job`),
    and, with a model path, the model's fit on the job's slice at the batch the job runs (or
    `batch` per device; `JobReport.model` says which and where it came from)."""
    return JobReport(*_core.check_job(os.fspath(job), None if model is None else os.fspath(model),
                                      train, None if batch is None else int(batch)))


def logs(text_or_path: Union[str, bytes, os.PathLike], *more_paths: Union[str, os.PathLike]) -> LogReport:
    """Why a TPU run died, from its logs: one or more paths (plain or gzip), or the log text."""
    if isinstance(text_or_path, bytes):
        return LogReport(*_core.diagnose_log_text("<log>", text_or_path.decode("utf-8", "replace")))
    first = os.fspath(text_or_path)
    paths = [first, *(os.fspath(p) for p in more_paths)]
    if more_paths or os.path.exists(first):
        return LogReport(*_core.diagnose_log_files(paths))
    if "\n" not in first and len(first) < 4096 and not first.strip().startswith(("Traceback", "E ")):
        if os.sep in first or first.endswith((".log", ".txt", ".gz")):
            raise Error(f"{first}: no such file")
    return LogReport(*_core.diagnose_log_text("<log>", first))


def rules() -> list:
    """Every rule as (code, name, summary), sorted by code."""
    return list(_core.rules())


def rule(code: str) -> str:
    """A rule's documentation page (markdown)."""
    return _core.rule_doc(code.upper())


def targets() -> list:
    """The accelerators tpu-doctor knows, as dicts (what `tpu-doctor targets --format json` lists)."""
    import json

    return json.loads(_core.targets_json())["targets"]


def example() -> bytes:
    """The bundled example model (ONNX ResNet-50), for trying the API."""
    return _core.bundled_example()[1]


def _args(target, batch, dims, train, optimizer, precision, select, ignore) -> "_core.AnalyzeArgs":
    a = _core.AnalyzeArgs()
    a.target = target
    if batch is not None:
        if isinstance(batch, bool) or not isinstance(batch, int):
            raise Error(f"batch must be an int, not {type(batch).__name__}")
        a.batch = batch
    if dims:
        a.dims = {str(k): int(v) for k, v in dims.items()}
    a.train = bool(train)
    a.optimizer = optimizer
    a.precision = precision
    a.select = [s.upper() for s in ([select] if isinstance(select, str) else select)]
    a.ignore = [s.upper() for s in ([ignore] if isinstance(ignore, str) else ignore)]
    return a


def _analyze(obj, example_inputs, input_format, args):
    model = resolve(obj, example_inputs, input_format)
    args.input_format = model.input_format
    if model.path is not None:
        return _core.analyze_path(model.path, args)
    return _core.analyze_bytes(model.data, model.name, args)
