// The JOB rules' factories (one rule per file) and what they share.
#pragma once

#include <memory>
#include <string>

#include "tpudoctor/jobs/job.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

std::unique_ptr<JobRule> MakeJob001UnknownAccelerator();
std::unique_ptr<JobRule> MakeJob002SliceShape();
std::unique_ptr<JobRule> MakeJob003ZoneWithoutTpu();
std::unique_ptr<JobRule> MakeJob004TpuReplicaCount();
std::unique_ptr<JobRule> MakeJob005RuntimeMismatch();
std::unique_ptr<JobRule> MakeJob006BatchNotDivisible();
std::unique_ptr<JobRule> MakeJob007PerCoreBatch();
std::unique_ptr<JobRule> MakeJob008ModelDoesNotFit();
std::unique_ptr<JobRule> MakeJob009XmpSpawnNprocs();
std::unique_ptr<JobRule> MakeJob010DropRemainder();

// A finding located at where the spec names `field` (a key path or `line N`).
inline Diagnostic JobFinding(const JobContext& c, std::string_view code, Severity severity,
                             std::string message, const std::string& field, std::string fix) {
  Diagnostic d;
  d.code = std::string(code);
  d.severity = severity;
  d.message = std::move(message);
  d.location.file = c.spec.file;
  auto it = c.spec.where.find(field);
  d.location.node = it == c.spec.where.end() ? "" : it->second;
  if (!fix.empty()) d.fix = Fix{std::move(fix), FixApplicability::kDisplayOnly};
  return d;
}

// Data-parallel replicas of the spec's slice: the devices a framework sees (v2/v3: two per chip)
// divided by the tensor-parallel degree; 0 when unknown.
inline int Replicas(const JobSpec& spec) {
  if (spec.generation == nullptr || spec.chips == 0) return 0;
  auto t = FindTarget(spec.generation->target);
  if (!t) return 0;
  const int devices = spec.chips * std::max(1, (*t)->devices_per_chip);
  return devices % spec.tensor_parallel == 0 ? devices / spec.tensor_parallel : devices;
}

// The slice as users name it: `v5litepod-16`.
inline std::string SliceName(const JobSpec& spec) {
  return spec.generation && spec.chips ? spec.generation->AcceleratorType(spec.chips) : "";
}

#define TPUD_JOB_RULE(Code, Name, Summary)                \
  std::string_view code() const override { return Code; } \
  std::string_view name() const override { return Name; } \
  std::string_view summary() const override { return Summary; }

}  // namespace tpudoctor
