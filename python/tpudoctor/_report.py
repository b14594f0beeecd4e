"""Typed, read-only results: what tpudoctor.check/estimate/logs return.

Every object is built from the JSON the native core renders (the same JSON `tpu-doctor ... --format
json` prints, documented in docs/json-schema.md), so the Python view and the CLI never disagree.
`to_dict()` gives that JSON as Python data, `to_json()` the text itself.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Location:
    graph: str = ""
    node: str = ""
    op: str = ""
    value: str = ""
    scope: str = ""
    file: str = ""
    line: int = 0
    column: int = 0  # Python scripts: 1-based, in characters
    cell: int = 0  # notebooks: the cell, numbered as Jupyter shows them

    def __str__(self) -> str:
        parts = [f"node `{self.node}`" if self.node else "", f"value `{self.value}`" if self.value else ""]
        parts += [f"layer `{self.scope}`" if self.scope else ""]
        where = self.file + (f":cell {self.cell}" if self.cell else "")
        where += (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        parts += [where if self.file else ""]
        return ", ".join(p for p in parts if p) or self.graph


@dataclass(frozen=True)
class Fix:
    description: str
    applicability: str  # "safe", "unsafe" or "display-only"


@dataclass(frozen=True)
class Finding:
    code: str  # "TPU001"
    severity: str  # "error", "warning" or "note"
    message: str
    location: Location
    notes: Tuple[str, ...] = ()
    fix: Optional[Fix] = None

    @staticmethod
    def from_dict(d: Dict[str, Any]) -> "Finding":
        fix = d.get("fix")
        return Finding(
            code=d["code"],
            severity=d["severity"],
            message=d["message"],
            location=Location(**d.get("location", {})),
            notes=tuple(d.get("notes", ())),
            fix=Fix(fix["description"], fix["applicability"]) if fix else None,
        )

    def __str__(self) -> str:
        return f"{self.severity}[{self.code}]: {self.message} ({self.location})"


@dataclass(frozen=True)
class Estimate:
    """One step of the model on one target (see `tpu-doctor estimate`)."""

    target: str
    chips: int
    step_time_ms: float
    samples_per_s: float
    mfu: float
    peak_memory_bytes: float
    hbm_bytes: float
    fits: bool
    max_batch: int
    usd_per_hour: Optional[float]
    usd_per_million_samples: Optional[float]
    memory: Dict[str, float]
    top_ops: Tuple[Dict[str, Any], ...]
    assumptions: Tuple[str, ...]
    batch_per_device: int
    runtime: str = "eager"  # how ops became kernels: "eager", "xla" or "compiled"
    kernels: int = 0  # kernels one forward pass launches
    # With estimate(serve=...): ttft_ms, tpot_ms, output_tokens_per_s_per_chip,
    # usd_per_million_output_tokens, kv_cache_bytes_per_chip, fits, max_concurrency, ...
    serving: Optional[Dict[str, Any]] = None
    global_batch: int = 0  # samples per step over every chip and micro-batch
    # How the chips share the step: {"data", "fsdp", "tensor"} and, above 1, "expert", "context",
    # "pipeline", "virtual_stages".
    parallel: Optional[Dict[str, int]] = None
    micro_batches: int = 1  # per replica and step
    # Where the step's time goes, ms: forward_ms, backward_ms, recompute_ms, optimizer_ms,
    # allreduce_ms, expert_parallel_ms, pipeline_bubble_ms, host_ms, ... (the JSON's `*_ms`
    # fields besides step_time_ms; docs/json-schema.md)
    breakdown: Optional[Dict[str, float]] = None

    @staticmethod
    def from_dict(d: Dict[str, Any], batch: int) -> "Estimate":
        return Estimate(
            target=d["target"],
            chips=d["chips"],
            step_time_ms=d["step_time_ms"],
            samples_per_s=d["samples_per_s"],
            mfu=d["mfu"],
            peak_memory_bytes=d["peak_memory_bytes"],
            hbm_bytes=d["hbm_bytes"],
            fits=d["fits"],
            max_batch=d["max_batch"],
            usd_per_hour=d.get("usd_per_hour"),
            usd_per_million_samples=d.get("usd_per_million_samples"),
            memory=dict(d["memory"]),
            top_ops=tuple(d.get("top_ops", ())),
            assumptions=tuple(d.get("assumptions", ())),
            batch_per_device=batch,
            runtime=d.get("runtime", "eager"),
            kernels=d.get("kernels", 0),
            serving=dict(d["serving"]) if d.get("serving") else None,
            global_batch=d.get("global_batch", 0),
            parallel=dict(d["parallel"]) if d.get("parallel") else None,
            micro_batches=d.get("micro_batches", 1),
            breakdown={k: v for k, v in d.items()
                       if k.endswith("_ms") and k != "step_time_ms" and isinstance(v, (int, float))},
        )


def _n(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _estimates(text: Optional[str]) -> List[Estimate]:
    if not text:
        return []
    d = json.loads(text)
    return [Estimate.from_dict(e, d["batch_per_device"]) for e in d["estimates"]]


class Report:
    """The verdict, findings and estimates for one model on one target.

    Attributes: `verdict` ("ready", "runs with warnings", "blocked"), `findings` (list of Finding,
    errors first), `estimate` (the Estimate on the check's target at the model's batch, or None when
    the shapes are not static), `estimates` (one per target asked of `tpudoctor.estimate`), `model`,
    `format`, `producer`, `framework`, `framework_version`, `batch` and `batch_source` (where the
    batch came from: "flag", "model" or "none"), `target`, `errors`, `warnings`, `notes`,
    `shape_notes` (how the shapes were made static), `flag_notes` (arguments given that this
    input cannot honour: `batch` for a script, `batch` when serving).
    """

    def __init__(self, native: Any):
        self._native = native
        self._dict = json.loads(native.json())
        d = self._dict
        self.model: str = d["model"]["path"]
        self.format: str = d["model"]["format"]
        self.producer: str = d["model"]["producer"]
        self.target: str = d["target"]["name"]
        self.verdict: str = d["verdict"]
        self.errors: int = d["summary"]["errors"]
        self.warnings: int = d["summary"]["warnings"]
        self.notes: int = d["summary"]["notes"]
        self.findings: List[Finding] = [Finding.from_dict(f) for f in d["findings"]]
        self.shape_notes: List[str] = list(d.get("shape_notes", ()))  # how the shapes were made static
        self.flag_notes: List[str] = list(d.get("flag_notes", ()))  # arguments this input cannot honour
        own = _estimates(native.check_estimate_json())
        self.estimate: Optional[Estimate] = own[0] if own else None
        self.estimates: List[Estimate] = (
            _estimates(native.estimate_json()) if native.estimate_count else []
        )
        self.estimate_unavailable: str = native.estimate_unavailable
        facts = native.facts
        self.framework: str = facts["framework"]  # "pytorch", "keras", "tensorflow", "jax", "unknown"
        self.framework_version: str = facts["framework_version"]
        self.xla_program: bool = facts["xla_program"]
        self.batch: Optional[int] = facts["batch"]  # the per-device batch the shapes use
        self.batch_source: str = facts["batch_source"]  # "flag", "model" or "none"
        # check(script, fix=True): how many fixes were applied, how many unsafe ones were not.
        self.fixes_applied: int = 0
        self.unsafe_fixes_left: int = 0

    @property
    def blocked(self) -> bool:
        return self.verdict == "blocked"

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.to_json())

    def to_json(self) -> str:
        return self._native.json()

    def to_text(self) -> str:
        return self._native.text()

    def to_html(self) -> str:
        return self._native.html()

    def to_sarif(self) -> str:
        return self._native.sarif()

    def estimate_text(self) -> str:
        return self._native.estimate_text() if self.estimates else ""

    def _repr_html_(self) -> str:
        return self._native.html_fragment()

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"<tpudoctor.Report {self.model!r} on {self.target}: {self.verdict} "
            f"({_n(self.errors, 'error')}, {_n(self.warnings, 'warning')}, {_n(self.notes, 'note')})>"
        )


@dataclass(frozen=True)
class Evidence:
    file: str
    line: int
    text: str


@dataclass(frozen=True)
class LogCause:
    category: str  # "hbm_oom", "unsupported_op", ...
    severity: str
    title: str
    signature: str
    count: int
    knock_on: bool
    evidence: Tuple[Evidence, ...]
    extracted: Dict[str, str]
    explanation: str
    fix: str
    layer: str = "signature"  # "signature" or "fallback" (the scored layer named the category)
    confidence: float = 1.0  # the fallback's similarity to the category, 0..1


class _Rendered:
    """A result the core rendered twice: as JSON (`to_json`, `to_dict`) and as the CLI's text."""

    def __init__(self, json_text: str, text: str):
        self._json = json_text
        self._text = text

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._json)

    def to_json(self) -> str:
        return self._json

    def to_text(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(self._text) + "</pre>"


class LogReport(_Rendered):
    """Why a TPU run died: `causes` in rank order (root cause first), `framework`, `versions`."""

    def __init__(self, json_text: str, text: str):
        super().__init__(json_text, text)
        d = json.loads(json_text)
        self.framework: str = d.get("framework", "")
        self.versions: Dict[str, str] = dict(d.get("versions", {}))
        self.causes: List[LogCause] = [
            LogCause(
                category=c["category"],
                severity=c["severity"],
                title=c["title"],
                signature=c["signature"],
                count=c["count"],
                knock_on=c["knock_on"],
                evidence=tuple(Evidence(**e) for e in c.get("evidence", ())),
                extracted=dict(c.get("extracted", {})),
                explanation=c.get("explanation", ""),
                fix=c.get("fix", ""),
                layer=c.get("layer", "signature"),
                confidence=c.get("confidence", 1.0),
            )
            for c in d.get("causes", ())
        ]

    @property
    def root_cause(self) -> Optional[LogCause]:
        return self.causes[0] if self.causes else None

    def __repr__(self) -> str:
        cause = self.root_cause
        what = f"{cause.category}: {cause.title}" if cause else "no failure found"
        return f"<tpudoctor.LogReport {what}>"


class EstimateReport(Report):
    """What `tpudoctor.estimate` returns: a Report whose `estimates` has one Estimate per target.

    Iterating gives the estimates; `report["tpu-v6e-8"]` the one of a target; `str()` the table
    `tpu-doctor estimate` prints.
    """

    def __iter__(self):
        return iter(self.estimates)

    def __len__(self) -> int:
        return len(self.estimates)

    def __getitem__(self, target: str) -> Estimate:
        for e in self.estimates:
            if e.target == target:
                return e
        raise KeyError(f"{target} (estimated: {', '.join(e.target for e in self.estimates)})")

    def __str__(self) -> str:
        return self.estimate_text()

    def __repr__(self) -> str:
        rows = "; ".join(
            f"{e.target}: {e.step_time_ms:.3g} ms/step, {e.samples_per_s:,.0f} samples/s"
            + ("" if e.fits else ", does not fit")
            for e in self.estimates
        )
        return f"<tpudoctor.EstimateReport {self.model!r}: {rows}>"


@dataclass(frozen=True)
class SliceChoice:
    """One configuration `plan` weighed: slice, sharding, remat, batch, speed and cost."""

    generation: str  # "tpu-v6e"
    accelerator_type: str  # "v6e-16"
    topology: str  # "4x4"
    chips: int
    hosts: int
    parallel: Dict[str, int]  # {"data": 1, "fsdp": 16, "tensor": 1}
    remat: str  # "none", "dots", "layer", "offload", "save_dot_except_mlpwi"
    per_device_batch: float  # per device: per chip, or per TensorCore on v2, v3 and TPU7x
    global_batch: int
    step_time_ms: float
    samples_per_s: float
    mfu: float
    memory_per_chip_bytes: float
    hbm_bytes: float  # per chip, as tpudoctor.targets() lists it
    tokens_per_s_per_chip: Optional[float] = None
    usd_per_hour: Optional[float] = None
    usd_per_million_samples: Optional[float] = None
    usd_per_million_tokens: Optional[float] = None
    job_hours: Optional[float] = None  # with a job (tokens or epochs): its wall time and cost
    job_usd: Optional[float] = None
    # What the framework sees: a chip, or each TensorCore of a v2, v3 or TPU7x chip (2 per chip).
    devices: int = 0
    memory_per_device_bytes: float = 0.0
    hbm_per_device_bytes: float = 0.0

    @staticmethod
    def from_dict(d: Dict[str, Any]) -> "SliceChoice":
        known = SliceChoice.__dataclass_fields__
        return SliceChoice(**{k: v for k, v in d.items() if k in known})

    def __str__(self) -> str:
        sharding = ", ".join(f"{k} {v}" for k, v in self.parallel.items() if v > 1) or "one chip"
        cost = f", ${self.usd_per_hour:.2f}/h" if self.usd_per_hour is not None else ""
        job = f", job {self.job_hours:.1f} h ${self.job_usd:,.0f}" if self.job_usd is not None else ""
        per = "chip" if self.devices in (0, self.chips) else "device"
        return (f"{self.accelerator_type} ({sharding}, remat {self.remat}): batch "
                f"{self.per_device_batch:g}/{per} ({self.global_batch} global), "
                f"{self.step_time_ms:.4g} ms/step{cost}{job}")


class Plan(Mapping):
    """What `tpudoctor.plan` returns: the chosen slice and what it was weighed against.

    `choice` (a SliceChoice, None when nothing fits), `best_per_generation`, `runner_ups`, `why`
    (one line: why this slice, when planning a job), `job`, `unfit`, `notes`, `blockers`, `files`
    (with emit=True: file name -> text). It is also a read-only mapping over the JSON of
    `tpu-doctor plan --format json` (`plan["choice"]["global_batch"]`), plus "files".
    """

    def __init__(self, json_text: str, files: Optional[Dict[str, str]] = None):
        self._json = json_text
        d = json.loads(json_text)
        if files is not None:
            d["files"] = dict(files)
        self._dict = d
        self.model: str = d["model"]
        self.format: str = d["format"]
        self.tokens_per_sample: Optional[int] = d.get("tokens_per_sample")
        self.max_global_batch: Optional[int] = d.get("max_global_batch")
        self.choice: Optional[SliceChoice] = (
            SliceChoice.from_dict(d["choice"]) if d.get("choice") else None)
        self.best_per_generation: List[SliceChoice] = [
            SliceChoice.from_dict(c) for c in d.get("best_per_generation", ())]
        self.runner_ups: List[SliceChoice] = [SliceChoice.from_dict(c) for c in d.get("runner_ups", ())]
        self.job: Optional[Dict[str, Any]] = d.get("job")
        self.why: str = d.get("why", "")
        self.unfit: List[Any] = list(d.get("unfit", ()))
        self.notes: List[str] = list(d.get("notes", ()))
        self.blockers: List[Any] = list(d.get("blockers", ()))
        self.files: Dict[str, str] = dict(files or {})

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    def __iter__(self):
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._json)

    def to_json(self) -> str:
        return self._json

    def __repr__(self) -> str:
        what = str(self.choice) if self.choice else "nothing fits"
        return f"<tpudoctor.Plan {self.model!r}: {what}>"


@dataclass(frozen=True)
class JobFinding:
    code: str  # "JOB002"
    severity: str  # "error", "warning" or "note"
    message: str
    where: str  # a key path (`workerPoolSpecs[0].machineSpec.machineType`) or `line N`
    fix: Optional[str] = None


class JobReport(_Rendered):
    """What `tpudoctor.check_job` returns: the slice a job file asks for and its findings.

    `verdict`, `findings` (JobFinding, errors first), `errors`, `warnings`, `notes`, `job`,
    `kind` ("vertex-custom-job", "gke-manifest", "launch-script"), `generation`,
    `accelerator_type`, `chips`, and with a model `model` ({"path", "batch_per_device",
    "batch_from"}: the batch the model was judged at and where it came from).
    """

    def __init__(self, json_text: str, text: str):
        super().__init__(json_text, text)
        d = json.loads(json_text)
        self.job: str = d["job"]
        self.kind: str = d["kind"]
        self.generation: Optional[str] = d.get("generation")
        self.accelerator_type: Optional[str] = d.get("accelerator_type")
        self.chips: int = d.get("chips", 0)
        self.model: Optional[Dict[str, Any]] = d.get("model")
        self.findings: List[JobFinding] = [JobFinding(**f) for f in d["findings"]]
        summary = d["summary"]
        self.errors: int = summary["errors"]
        self.warnings: int = summary["warnings"]
        self.notes: int = summary["notes"]
        self.verdict: str = d["verdict"]

    @property
    def blocked(self) -> bool:
        return self.verdict == "blocked"

    def __getitem__(self, key: str) -> Any:  # the JSON's keys, as check_job returned before
        return self.to_dict()[key]

    def __repr__(self) -> str:
        where = f" ({self.accelerator_type})" if self.accelerator_type else ""
        return (f"<tpudoctor.JobReport {self.job!r}{where}: {self.verdict} "
                f"({_n(self.errors, 'error')}, {_n(self.warnings, 'warning')}, {_n(self.notes, 'note')})>")
