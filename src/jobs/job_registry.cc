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

ShapeOptions JobShapes(const JobSpec& spec, ShapeOptions given) {
  if (!given.batch) given.batch = spec.per_device_batch;
  return given;
}

std::vector<Diagnostic> CheckJob(const JobContext& context) {
  DiagnosticSink sink;
  for (const auto& rule : AllJobRules()) rule->Run(context, sink);
  std::vector<Diagnostic> out = sink.Take();
  SortDiagnostics(out);
  return out;
}

}  // namespace tpudoctor
