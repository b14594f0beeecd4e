// The tpudoctor Python module's native part: a thin layer over the library's entry points
// (tpudoctor/analyze.h, tpudoctor/logs/logs.h) and its renderers. Results cross as the Report
// object (rendered on demand) and as JSON text, which python/tpudoctor/ turns into typed objects.
// Errors raise tpudoctor.Error with the library's one-line message. Nothing here prints, and the
// GIL is released while a model or log is analysed.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <new>
#include <stdexcept>
#include <tuple>

#include "tpudoctor/analyze.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/jobs/emit.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/jobs/plan.h"
#include "tpudoctor/logs/logs.h"
#include "tpudoctor/report/render.h"
#include "tpudoctor/rules/rules.h"
#include "tpudoctor/script/script.h"
#include "tpudoctor/support/embedded.h"

namespace py = pybind11;

namespace tpudoctor {
namespace {

struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T OrRaise(Result<T> r) {
  if (!r) throw ToolError(r.error().message);
  return std::move(*r);
}

struct PyAnalyzeArgs {
  std::optional<double> moe_capacity_factor;  // --moe-capacity-factor
  std::string target = kDefaultTarget;
  std::optional<std::int64_t> batch;
  std::map<std::string, std::int64_t> dims;
  std::string input_format;
  bool train = false;
  std::string optimizer = "adam";
  std::string precision = "bf16";
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  std::vector<std::string> estimate_targets;
  std::optional<double> dataset_size;
  std::map<std::string, double> prices;  // target name → USD per chip-hour
  std::string parallel;                  // "fsdp=8,tp=2"; empty: data parallel
  std::string remat = "none";
  std::string runtime = "auto";
  bool channels_last = false;          // GPU convolutions in NHWC
  std::string attention_kernel;        // a GPU's fused attention kernel; empty: the runtime's
  std::int64_t micro_batches = 1;      // per replica and training step (--micro-batches)
  bool distributed_optimizer = false;  // --distributed-optimizer
  bool dedup_expert_dispatch = false;  // --dedup-expert-dispatch
  bool overlap_expert_comm = false;    // --overlap-expert-comm
  bool ring_context = false;           // --ring-context
  std::int64_t vocab_tiles = 1;        // --vocab-tiles
  bool keep_attention_output = false;  // --keep-attention-output
  std::int64_t lora_rank = 0;          // --lora
  std::string lora_targets = "all";    // --lora-targets
  // serve=(prompt_tokens, output_tokens, concurrency): serving figures (estimate --serve).
  std::optional<std::tuple<std::int64_t, std::int64_t, std::int64_t>> serve;
  std::string kv_cache_dtype;  // with serve: "bf16", "fp16", "fp8"; empty: the compute dtype's
  bool kv_reads_per_query_head = false;  // with serve: a pre-XQA decode kernel's KV reads
  std::int64_t kv_cache_length = 0;      // with serve: a static cache of N tokens a slot
  bool bucketed_prefill = false;         // with serve: prefills one at a time, padded
  bool replicated_prefill = false;       // with serve: one prefill stream for the replicas
  std::int64_t requests = 0;             // with serve: an offline job of N requests
};

// --moe-capacity-factor's range, for the Python arguments that set it.
std::optional<double> CheckedCapacityFactor(std::optional<double> f) {
  if (f && !(*f >= 0.01 && *f <= 64))
    throw ToolError("moe_capacity_factor must be between 0.01 and 64");
  return f;
}

AnalyzeOptions ToOptions(const PyAnalyzeArgs& a) {
  AnalyzeOptions o;
  o.target = a.target;
  if (a.batch && *a.batch < 1) throw ToolError("batch must be a positive integer");
  o.shapes.batch = a.batch;
  for (const auto& [name, value] : a.dims) {
    if (value < 1) throw ToolError("dim `" + name + "` must be a positive integer");
  }
  o.shapes.dims = a.dims;
  o.shapes.moe_capacity_factor = CheckedCapacityFactor(a.moe_capacity_factor);
  o.input_format = a.input_format;
  o.check.train = a.train;
  auto optimizer = ParseOptimizer(a.optimizer);
  if (!optimizer) {
    throw ToolError("optimizer `" + a.optimizer +
                    "` is not sgd, momentum, adam, adamw or adafactor");
  }
  auto precision = ParsePrecision(a.precision);
  if (!precision) throw ToolError("precision `" + a.precision + "` is not " + PrecisionChoices());
  if (auto refusal = TrainingPrecisionRefusal(*precision); refusal && a.train)
    throw ToolError(*refusal);
  o.check.optimizer = *optimizer;
  o.check.precision = *precision;
  o.check.select = a.select;
  o.check.ignore = a.ignore;
  o.estimate_targets = a.estimate_targets;
  o.dataset_size = a.dataset_size;
  if (!a.parallel.empty()) o.parallel = OrRaise(ParseParallelism(a.parallel));
  auto remat = ParseRemat(a.remat);
  if (!remat) throw ToolError("remat `" + a.remat + "` is not " + RematChoices());
  o.remat = *remat;
  auto runtime = ParseRuntime(a.runtime);
  if (!runtime) throw ToolError("runtime `" + a.runtime + "` is not " + RuntimeChoices());
  o.runtime = *runtime;
  o.channels_last = a.channels_last;
  o.attention_kernel = a.attention_kernel;
  if (a.micro_batches < 1 || a.micro_batches > (1 << 20))
    throw ToolError("micro_batches must be between 1 and 1048576");
  if ((a.micro_batches > 1 || a.distributed_optimizer) && !a.train)
    throw ToolError(
        "micro_batches and distributed_optimizer describe a training step; pass "
        "train=True");
  o.micro_batches = static_cast<int>(a.micro_batches);
  o.distributed_optimizer = a.distributed_optimizer;
  o.dedup_expert_dispatch = a.dedup_expert_dispatch;
  o.overlap_expert_comm = a.overlap_expert_comm;
  o.ring_context = a.ring_context;
  if (a.vocab_tiles < 1 || a.vocab_tiles > 65536)
    throw ToolError("vocab_tiles must be between 1 and 65536");
  o.vocab_tiles = static_cast<int>(a.vocab_tiles);
  o.keep_attention_output = a.keep_attention_output;
  if (a.lora_rank < 0 || a.lora_rank > 65536)
    throw ToolError("lora_rank must be between 0 (none) and 65536");
  o.lora_rank = static_cast<int>(a.lora_rank);
  auto targets = ParseLoraTargets(a.lora_targets);
  if (!targets)
    throw ToolError("lora_targets `" + a.lora_targets + "` is not all, attention or qkv");
  o.lora_targets = *targets;
  if (a.serve) {
    const auto [prompt, output, concurrency] = *a.serve;
    if (prompt < 1 || output < 1 || concurrency < 1)
      throw ToolError("serve needs positive prompt tokens, output tokens and concurrency");
    if (a.train) throw ToolError("serve estimates inference; drop train=True");
    if (!a.kv_cache_dtype.empty() && !KvCacheDtypeBytes(a.kv_cache_dtype))
      throw ToolError("kv_cache_dtype `" + a.kv_cache_dtype + "` is not " + KvCacheDtypeChoices());
    if (a.requests < 0 || a.requests > (std::int64_t{1} << 30))
      throw ToolError("requests must be between 0 (steady state) and 1073741824");
    if (a.kv_cache_length < 0 || a.kv_cache_length > (std::int64_t{1} << 24))
      throw ToolError("kv_cache_length must be between 0 (a paged cache) and 16777216 tokens");
    SetServing(
        o, ServingOptions{prompt, output, concurrency, a.kv_cache_dtype, a.kv_reads_per_query_head,
                          a.kv_cache_length, a.bucketed_prefill, a.replicated_prefill, a.requests});
  } else if (!a.kv_cache_dtype.empty() || a.kv_reads_per_query_head || a.kv_cache_length != 0 ||
             a.requests != 0 || a.bucketed_prefill || a.replicated_prefill) {
    throw ToolError(
        "kv_cache_dtype, kv_reads_per_query_head, kv_cache_length, bucketed_prefill, requests and "
        "replicated_prefill are serving options: pass serve=(prompt, output, concurrency)");
  }
  for (const auto& [name, usd] : a.prices) {
    if (auto set = SetPrice(o, name, usd); !set) throw ToolError("prices: " + set.error().message);
  }
  return o;
}

Report AnalyzeSource(const Source& source, const PyAnalyzeArgs& args) {
  const AnalyzeOptions options = ToOptions(args);
  Result<Report> report = MakeError("");
  {
    py::gil_scoped_release release;
    report = Analyze(source, options);
  }
  return OrRaise(std::move(report));
}

Report AnalyzePath(const std::string& path, const PyAnalyzeArgs& args) {
  return AnalyzeSource(OrRaise(ReadSource(path)), args);
}

Report AnalyzeBytes(py::bytes data, const std::string& name, const PyAnalyzeArgs& args) {
  Source source;
  source.display_name = name;
  source.bytes = std::string(data);
  if (static_cast<std::int64_t>(source.bytes.size()) > kMaxSourceBytes)
    throw ToolError(name + ": larger than a model description can be");
  return AnalyzeSource(source, args);
}

// FixScript on a script or notebook: (fixed bytes, fixes applied, unsafe fixes left, the report of
// the fixed file). The Python side writes the file.
py::tuple FixScriptPath(const std::string& path, const PyAnalyzeArgs& args, bool unsafe) {
  const Source source = OrRaise(ReadSource(path));
  if (!IsScriptPath(path)) throw ToolError(path + ": fix= applies to Python scripts and notebooks");
  const AnalyzeOptions options = ToOptions(args);
  Result<FixOutcome> fixed = MakeError("");
  {
    py::gil_scoped_release release;
    fixed = FixScript(source, options.check, unsafe);
  }
  FixOutcome outcome = OrRaise(std::move(fixed));
  return py::make_tuple(py::bytes(outcome.bytes), outcome.applied, outcome.unsafe_left,
                        std::move(outcome.after));
}

// The estimate the checks used, rendered like `tpu-doctor estimate --format json`; None when the
// model could not be estimated.
std::optional<std::string> CheckEstimateJson(const Report& r) {
  if (!r.estimate) return std::nullopt;
  Report copy = r;
  copy.estimates = {*r.estimate};
  copy.estimate_batch = r.facts.StepBatch();
  return RenderEstimateJson(copy);
}

struct PyPlanArgs {
  std::map<std::string, std::int64_t> dims;
  std::optional<double> moe_capacity_factor;
  std::string input_format;
  std::vector<std::string> targets;
  int max_chips = 256;
  std::optional<double> budget;
  std::optional<std::int64_t> global_batch;
  std::string objective = "cost";
  bool train = true;
  std::string optimizer = "adam";
  std::string precision = "bf16";
  bool emit = false;
  std::string framework;
  std::optional<double> tokens;  // the job (plan --tokens); or epochs x dataset_size samples
  std::optional<double> samples;
  std::optional<double> deadline_hours;
  bool fine_tune = false;
};

// The plan as `tpu-doctor plan --format json` prints it, and the emitted files (name → text) when
// asked for.
std::pair<std::string, std::map<std::string, std::string>> PlanSource(const Source& source,
                                                                      const PyPlanArgs& a) {
  PlanOptions o;
  o.shapes.dims = a.dims;
  o.shapes.moe_capacity_factor = CheckedCapacityFactor(a.moe_capacity_factor);
  o.input_format = a.input_format;
  o.generations = a.targets;
  o.max_chips = a.max_chips;
  o.budget_usd_per_hour = a.budget;
  o.global_batch = a.global_batch;
  if (a.objective != "cost" && a.objective != "throughput")
    throw ToolError("objective `" + a.objective + "` is not cost or throughput");
  o.objective = a.objective == "cost" ? PlanObjective::kCost : PlanObjective::kThroughput;
  o.train = a.train;
  auto optimizer = ParseOptimizer(a.optimizer);
  auto precision = ParsePrecision(a.precision);
  if (!optimizer || !precision) throw ToolError("unknown optimizer or precision");
  o.optimizer = *optimizer;
  o.precision = *precision;
  o.job_tokens = a.tokens;
  o.job_samples = a.samples;
  o.deadline_hours = a.deadline_hours;
  o.fine_tune = a.fine_tune;
  if (a.deadline_hours && !a.tokens && !a.samples)
    throw ToolError("deadline_hours needs the job's size (tokens, or epochs with dataset_size)");
  Result<Plan> plan = MakeError("");
  {
    py::gil_scoped_release release;
    plan = MakePlan(source, o);
  }
  Plan p = OrRaise(std::move(plan));
  std::map<std::string, std::string> files;
  if (a.emit && p.choice() != nullptr) {
    EmitOptions eo;
    eo.framework = a.framework;
    for (EmittedFile& f : OrRaise(EmitJobFiles(p, *p.choice(), eo)))
      files[f.name] = std::move(f.text);
  }
  return {RenderPlanJson(p), files};
}

// `check --job`: the report as (JSON, text); the model (a path, or none) loaded at the batch the
// job runs (or `batch`).
std::pair<std::string, std::string> CheckJobFile(const std::string& job_path,
                                                 const std::optional<std::string>& model_path,
                                                 bool train, std::optional<std::int64_t> batch) {
  const JobSpec spec = OrRaise(ReadJobSpec(OrRaise(ReadSource(job_path))));
  std::optional<LoadedModel> model;
  std::optional<JobModel> judged;
  if (model_path) {
    judged = JobModel{*model_path, ModelBatchOf(spec, batch)};
    ShapeOptions shapes;
    shapes.batch = judged->batch.per_device;
    model = OrRaise(LoadModel(OrRaise(ReadSource(*model_path)), shapes));
  }
  JobContext context{spec, model ? &model->graph : nullptr, train};
  const std::vector<Diagnostic> findings = CheckJob(context);
  const JobModel* shown = judged ? &*judged : nullptr;
  return {RenderJobJson(spec, shown, findings), RenderJobText(spec, shown, findings)};
}

std::pair<std::string, std::string> Logs(const LogDiagnosis& d) {
  return {RenderLogsJson(d), RenderLogsText(d)};
}

}  // namespace
}  // namespace tpudoctor

PYBIND11_MODULE(_core, m) {
  using namespace tpudoctor;
  m.doc() = "tpu-doctor's native core; use the `tpudoctor` package, not this module.";
  // Forking a threaded Python process is unsafe: legacy .h5 files are read through h5py by the
  // Python package instead of libhdf5 in a child process.
  SetChildProcessesAllowed(false);
  static py::exception<ToolError>& error =
      py::register_exception<ToolError>(m, "Error", PyExc_ValueError);
  // An allocation no size check foresaw is bad input too: the same Error, one line.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::bad_alloc&) {
      PyErr_SetString(error.ptr(),
                      "out of memory while reading the input; it is larger or more deeply nested "
                      "than a model, config or log can be");
    }
  });
  m.attr("version") = kToolVersion;

  py::class_<PyAnalyzeArgs>(m, "AnalyzeArgs")
      .def(py::init<>())
      .def_readwrite("target", &PyAnalyzeArgs::target)
      .def_readwrite("batch", &PyAnalyzeArgs::batch)
      .def_readwrite("dims", &PyAnalyzeArgs::dims)
      .def_readwrite("moe_capacity_factor", &PyAnalyzeArgs::moe_capacity_factor)
      .def_readwrite("input_format", &PyAnalyzeArgs::input_format)
      .def_readwrite("train", &PyAnalyzeArgs::train)
      .def_readwrite("optimizer", &PyAnalyzeArgs::optimizer)
      .def_readwrite("precision", &PyAnalyzeArgs::precision)
      .def_readwrite("select", &PyAnalyzeArgs::select)
      .def_readwrite("ignore", &PyAnalyzeArgs::ignore)
      .def_readwrite("estimate_targets", &PyAnalyzeArgs::estimate_targets)
      .def_readwrite("dataset_size", &PyAnalyzeArgs::dataset_size)
      .def_readwrite("prices", &PyAnalyzeArgs::prices)
      .def_readwrite("parallel", &PyAnalyzeArgs::parallel)
      .def_readwrite("remat", &PyAnalyzeArgs::remat)
      .def_readwrite("serve", &PyAnalyzeArgs::serve)
      .def_readwrite("kv_cache_dtype", &PyAnalyzeArgs::kv_cache_dtype)
      .def_readwrite("kv_reads_per_query_head", &PyAnalyzeArgs::kv_reads_per_query_head)
      .def_readwrite("kv_cache_length", &PyAnalyzeArgs::kv_cache_length)
      .def_readwrite("requests", &PyAnalyzeArgs::requests)
      .def_readwrite("bucketed_prefill", &PyAnalyzeArgs::bucketed_prefill)
      .def_readwrite("replicated_prefill", &PyAnalyzeArgs::replicated_prefill)
      .def_readwrite("runtime", &PyAnalyzeArgs::runtime)
      .def_readwrite("channels_last", &PyAnalyzeArgs::channels_last)
      .def_readwrite("attention_kernel", &PyAnalyzeArgs::attention_kernel)
      .def_readwrite("micro_batches", &PyAnalyzeArgs::micro_batches)
      .def_readwrite("distributed_optimizer", &PyAnalyzeArgs::distributed_optimizer)
      .def_readwrite("dedup_expert_dispatch", &PyAnalyzeArgs::dedup_expert_dispatch)
      .def_readwrite("overlap_expert_comm", &PyAnalyzeArgs::overlap_expert_comm)
      .def_readwrite("ring_context", &PyAnalyzeArgs::ring_context)
      .def_readwrite("vocab_tiles", &PyAnalyzeArgs::vocab_tiles)
      .def_readwrite("keep_attention_output", &PyAnalyzeArgs::keep_attention_output)
      .def_readwrite("lora_rank", &PyAnalyzeArgs::lora_rank)
      .def_readwrite("lora_targets", &PyAnalyzeArgs::lora_targets);

  py::class_<Report>(m, "Report")
      .def("text", [](const Report& r) { return RenderText(r); })
      .def("json", &RenderJson)
      .def("sarif", &RenderSarif)
      .def("html", [](const Report& r) { return RenderHtml(r, true); })
      .def("html_fragment", [](const Report& r) { return RenderHtml(r, false); })
      .def("estimate_text", &RenderEstimateText)
      .def("estimate_json", &RenderEstimateJson)
      .def("check_estimate_json", &CheckEstimateJson)
      .def_readonly("estimate_unavailable", &Report::estimate_unavailable)
      .def_property_readonly("facts",
                             [](const Report& r) {
                               py::dict d;
                               d["format"] = r.facts.format;
                               d["framework"] = std::string(NameOf(r.facts.framework));
                               d["framework_version"] = r.facts.framework_version;
                               d["xla_program"] = r.facts.xla_program;
                               d["batch"] = r.facts.batch ? py::cast(*r.facts.batch) : py::none();
                               d["batch_source"] = std::string(NameOf(r.facts.batch_source));
                               return d;
                             })
      .def_property_readonly("estimate_count", [](const Report& r) { return r.estimates.size(); });

  py::class_<PyPlanArgs>(m, "PlanArgs")
      .def(py::init<>())
      .def_readwrite("dims", &PyPlanArgs::dims)
      .def_readwrite("moe_capacity_factor", &PyPlanArgs::moe_capacity_factor)
      .def_readwrite("input_format", &PyPlanArgs::input_format)
      .def_readwrite("targets", &PyPlanArgs::targets)
      .def_readwrite("max_chips", &PyPlanArgs::max_chips)
      .def_readwrite("budget", &PyPlanArgs::budget)
      .def_readwrite("global_batch", &PyPlanArgs::global_batch)
      .def_readwrite("objective", &PyPlanArgs::objective)
      .def_readwrite("train", &PyPlanArgs::train)
      .def_readwrite("optimizer", &PyPlanArgs::optimizer)
      .def_readwrite("precision", &PyPlanArgs::precision)
      .def_readwrite("emit", &PyPlanArgs::emit)
      .def_readwrite("framework", &PyPlanArgs::framework)
      .def_readwrite("tokens", &PyPlanArgs::tokens)
      .def_readwrite("samples", &PyPlanArgs::samples)
      .def_readwrite("deadline_hours", &PyPlanArgs::deadline_hours)
      .def_readwrite("fine_tune", &PyPlanArgs::fine_tune);
  m.def("plan_path", [](const std::string& path, const PyPlanArgs& a) {
    return PlanSource(OrRaise(ReadSource(path)), a);
  });
  m.def("plan_bytes", [](py::bytes data, const std::string& name, const PyPlanArgs& a) {
    Source source;
    source.display_name = name;
    source.bytes = std::string(data);
    return PlanSource(source, a);
  });
  m.def("check_job", &CheckJobFile, py::arg("job"), py::arg("model"), py::arg("train"),
        py::arg("batch"));
  m.def("analyze_path", &AnalyzePath, py::arg("path"), py::arg("args"));
  m.def("analyze_bytes", &AnalyzeBytes, py::arg("data"), py::arg("name"), py::arg("args"));
  m.def("fix_script_path", &FixScriptPath, py::arg("path"), py::arg("args"), py::arg("unsafe"));
  m.def("bundled_example", [] {
    const Source s = OrRaise(BundledExample());
    return std::make_pair(s.display_name, py::bytes(s.bytes));
  });
  m.def("diagnose_log_files", [](const std::vector<std::string>& paths) {
    Result<LogDiagnosis> d = MakeError("");
    {
      py::gil_scoped_release release;
      d = DiagnoseLogs(paths);
    }
    return Logs(OrRaise(std::move(d)));
  });
  m.def("diagnose_log_text", [](const std::string& name, const std::string& text) {
    Result<LogDiagnosis> d = MakeError("");
    {
      py::gil_scoped_release release;
      d = DiagnoseLogText(name, text);
    }
    return Logs(OrRaise(std::move(d)));
  });
  m.def("rules", [] {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const RuleInfo& r : AllRules()) out.emplace_back(r.code, r.name, r.summary);
    return out;
  });
  m.def("rule_doc", [](const std::string& code) {
    auto doc = RuleDoc(code);
    if (!doc) throw ToolError("no rule `" + code + "`");
    return std::string(*doc);
  });
  m.def("targets_json", &RenderTargetsJson);
}
