// The one list of JOB rules. Keep it sorted by code.
#include "src/jobs/rules/job_rules.h"
#include "tpudoctor/diag/diagnostic.h"

namespace tpudoctor {

const std::vector<std::unique_ptr<JobRule>>& AllJobRules() {
  static const auto* rules = [] {
    auto* v = new std::vector<std::unique_ptr<JobRule>>();
    v->push_back(MakeJob001UnknownAccelerator());
    v->push_back(MakeJob002SliceShape());
    v->push_back(MakeJob003ZoneWithoutTpu());
    v->push_back(MakeJob004TpuReplicaCount());
    v->push_back(MakeJob005RuntimeMismatch());
    v->push_back(MakeJob006BatchNotDivisible());
    v->push_back(MakeJob007PerCoreBatch());
    v->push_back(MakeJob008ModelDoesNotFit());
    v->push_back(MakeJob009XmpSpawnNprocs());
    v->push_back(MakeJob010DropRemainder());
    return v;
  }();
  return *rules;
}

JobModelBatch ModelBatchOf(const JobSpec& spec, std::optional<std::int64_t> given) {
  auto at = [&](const char* field) {
    auto it = spec.where.find(field);
    return it == spec.where.end() || it->second.empty() ? std::string() : ", " + it->second;
  };
  if (given) return {given, "--batch"};
  if (spec.per_device_batch)
    return {spec.per_device_batch, "the job's per-device batch" + at("per_device_batch")};
  const int replicas = Replicas(spec);
  auto split = [&](std::int64_t global, const std::string& what, const std::string& where) {
    if (replicas == 0 || global % replicas != 0) {
      return JobModelBatch{std::nullopt,
                           what + ", which does not split evenly over the slice" + where};
    }
    return JobModelBatch{global / replicas,
                         what + " over " + std::to_string(replicas) + " data replicas" + where};
  };
  if (spec.global_batch) {
    return split(*spec.global_batch, "the job's global batch " + std::to_string(*spec.global_batch),
                 at("global_batch"));
  }
  if (spec.batch_size && spec.xmp_spawn) {
    return {spec.batch_size,
            "the job's batch_size, per device as in xmp.spawn scripts" + at("batch_size")};
  }
  if (spec.batch_size) {
    return split(*spec.batch_size,
                 "the job's batch_size " + std::to_string(*spec.batch_size) + " as a global batch",
                 at("batch_size") + "; a torch_xla script would read it per device");
  }
  return {std::nullopt, "the job names no batch"};
}

std::vector<Diagnostic> CheckJob(const JobContext& context) {
  DiagnosticSink sink;
  for (const auto& rule : AllJobRules()) rule->Run(context, sink);
  std::vector<Diagnostic> out = sink.Take();
  SortDiagnostics(out);
  return out;
}

}  // namespace tpudoctor
