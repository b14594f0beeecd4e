#include "src/script/vertex_jobs.h"

#include "tpudoctor/jobs/job.h"

namespace tpudoctor::script {
namespace {

// Where a field was read: the byte offset of its value, as JobSpec::where keeps it for a script.
std::string At(Node value) { return "@" + std::to_string(value.begin()); }

// The keywords of a job call that say which slice it asks for.
bool IsSliceField(std::string_view key) {
  return key == "machine_type" || key == "accelerator_type" || key == "accelerator_count" ||
         key == "replica_count" || key == "tpu_topology";
}

// Reads one keyword-like field (from a call's keywords or a dict's pairs) into the spec, a name
// followed to the value it was assigned (`accelerator_count=NUM_CORES`). False when the field is
// one of the slice's but its value is not a literal the script spells (a parameter, an
// expression): the slice is then not known.
bool ReadField(const ScriptModel& model, std::string_view key, Node given, JobSpec& spec) {
  if (!IsSliceField(key)) return true;
  const Node value = model.Resolve(given);
  if (value.null()) return false;
  const std::string where = At(given);
  if (key == "accelerator_count" || key == "replica_count") {
    const auto v = IntLiteral(value);
    if (!v) return false;
    (key == "accelerator_count" ? spec.vertex_accelerator_count : spec.replica_count) = *v;
    spec.where[key == "accelerator_count" ? "vertex_accelerator_count" : "replica_count"] = where;
    return true;
  }
  const auto v = StringLiteral(value);
  if (!v) return false;
  if (key == "machine_type") {
    spec.vertex_machine_type = *v;
    spec.where["vertex_machine_type"] = where;
  } else if (key == "accelerator_type") {
    spec.vertex_accelerator_type = *v;
    spec.where["vertex_accelerator_type"] = where;
  } else {
    spec.topology = *v;
    spec.where["topology"] = where;
  }
  return true;
}

// A dict literal's string-keyed pairs, nested dicts read too (worker_pool_specs' machine_spec).
bool ReadDict(const ScriptModel& model, Node dict, JobSpec& spec, int depth = 0) {
  if (depth > 4) return true;
  bool known = true;
  for (std::uint32_t i = 0; i < dict.named_count(); ++i) {
    Node pair = dict.named(i);
    if (!pair.is("pair")) continue;
    auto key = StringLiteral(pair.field("key"));
    Node value = pair.field("value");
    if (!key) continue;
    if (value.is("dictionary")) {
      known &= ReadDict(model, value, spec, depth + 1);
    } else {
      known &= ReadField(model, *key, value, spec);
    }
  }
  return known;
}

// Whether a call launches a Vertex AI training job: `CustomJob(...)` (and `from_local_script`),
// `HyperparameterTuningJob(...)`, `run`/`submit` of a job the SDK made (CustomTrainingJob,
// CustomContainerTrainingJob, CustomPythonPackageTrainingJob, CustomJob), or any call given
// `worker_pool_specs`. Deployments (`Model.deploy`) and the notebooks' own helpers (a quota
// check) take the same keywords and are not jobs.
bool LaunchesJob(const ScriptModel& model, const Call& call) {
  const auto sdk_job = [](std::string_view name) {
    return name.find("aiplatform.") != std::string_view::npos &&
           (name.ends_with("TrainingJob") || name.ends_with("CustomJob") ||
            name.ends_with("CustomJob.from_local_script") ||
            name.ends_with("HyperparameterTuningJob"));
  };
  if (sdk_job(call.name) || call.Keyword("worker_pool_specs")) return true;
  if ((call.method != "run" && call.method != "submit") || !call.receiver) return false;
  const Node made = model.Resolve(call.receiver);
  const Call* maker = made.is("call") ? model.CallAt(made) : nullptr;
  return maker != nullptr && sdk_job(maker->name);
}

bool AsksForTpu(const JobSpec& s) {
  return s.vertex_accelerator_type.starts_with("TPU_") || s.vertex_machine_type == "cloud-tpu" ||
         s.vertex_machine_type.starts_with("ct");
}

// Moves a JOB finding from the spec's field to the script position recorded for it.
void Locate(const ScriptModel& model, const std::string& file, Node call, Diagnostic& d) {
  std::uint32_t offset = call.begin();
  if (d.location.node.starts_with("@")) {
    offset = static_cast<std::uint32_t>(std::stoul(d.location.node.substr(1)));
  }
  const Position p = model.text().Locate(offset);
  d.location = Location{};
  d.location.file = file;
  d.location.line = p.line;
  d.location.column = p.column;
  d.location.cell = p.cell;
}

}  // namespace

std::vector<Diagnostic> CheckVertexJobs(const ScriptModel& model, const std::string& file) {
  std::vector<Diagnostic> out;
  if (!model.Imports("google.cloud.aiplatform")) return out;
  for (const Call& call : model.calls()) {
    if (!LaunchesJob(model, call)) continue;
    JobSpec spec;
    spec.file = file;
    spec.kind = "vertex-custom-job";
    bool known = true;
    for (const auto& [key, value] : call.kwargs) {
      known &= ReadField(model, key, value, spec);
      const Node pools = key == "worker_pool_specs" ? model.Resolve(value) : Node();
      if (pools.is("list")) {
        for (std::uint32_t i = 0; i < pools.named_count(); ++i) {
          const Node pool = model.Resolve(pools.named(i));
          if (pool.is("dictionary")) known &= ReadDict(model, pool, spec);
        }
      }
    }
    // A slice field the script computes is not one the checks can hold against the catalog.
    if (!known || !AsksForTpu(spec)) continue;
    ResolveJobSlice(spec);
    for (Diagnostic& d : CheckJob({spec, nullptr})) {
      Locate(model, file, call.node, d);
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace tpudoctor::script
