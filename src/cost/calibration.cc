// Calibrations: the efficiency factors of each runtime family on TPUs and GPUs
// (data/calibration/*.json, each with its source), read once; a file a user passes with
// --calibration goes through the same reader.
#include <map>
#include <nlohmann/json.hpp>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

Calibration FromJson(const nlohmann::json& j, const std::string& name) {
  Calibration c;
  c.name = j.value("name", name);
  c.matrix_efficiency = j.value("matrix_efficiency", c.matrix_efficiency);
  c.conv_efficiency = j.value("conv_efficiency", c.conv_efficiency);
  c.depthwise_efficiency = j.value("depthwise_efficiency", c.depthwise_efficiency);
  if (j.contains("depthwise_memory_efficiency"))
    c.depthwise_memory_efficiency = j.at("depthwise_memory_efficiency").get<double>();
  if (j.contains("depthwise_backward_ratio"))
    c.depthwise_backward_ratio = j.at("depthwise_backward_ratio").get<double>();
  c.fused_attention = j.value("fused_attention", c.fused_attention);
  c.fused_activations = j.value("fused_activations", c.fused_activations);
  c.memory_efficiency = j.value("memory_efficiency", c.memory_efficiency);
  c.kernel_overhead_us = j.value("kernel_overhead_us", c.kernel_overhead_us);
  c.step_overhead_us = j.value("step_overhead_us", c.step_overhead_us);
  c.host_op_us = j.value("host_op_us", c.host_op_us);
  c.backward_ratio = j.value("backward_ratio", c.backward_ratio);
  c.saved_activation_share = j.value("saved_activation_share", c.saved_activation_share);
  c.saved_matrix_share = j.value("saved_matrix_share", c.saved_matrix_share);
  c.conv_rate_ignores_precision =
      j.value("conv_rate_ignores_precision", c.conv_rate_ignores_precision);
  c.transient_factor = j.value("transient_factor", c.transient_factor);
  c.fixed_memory_bytes = j.value("fixed_memory_bytes", c.fixed_memory_bytes);
  c.usable_hbm_share = j.value("usable_hbm_share", c.usable_hbm_share);
  c.ici_share = j.value("ici_share", c.ici_share);
  c.source = j.value("source", "");
  return c;
}

Calibration LoadCalibration(const std::string& name) {
  auto data = FindEmbedded("data/calibration/" + name + ".json");
  if (!data) return Calibration{};
  auto j = nlohmann::json::parse(*data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Calibration{};
  try {
    return FromJson(j, name);
  } catch (const nlohmann::json::exception&) {
    return Calibration{};
  }
}

}  // namespace

Result<Calibration> ParseCalibration(std::string_view text, const std::string& name) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return MakeError(name + ": not a JSON object");
  try {
    return FromJson(j, name);
  } catch (const nlohmann::json::exception& e) {
    return MakeError(name + ": " + e.what());
  }
}

const Calibration& CalibrationFor(const TargetSpec& target, Runtime runtime) {
  // Every embedded calibration, loaded once.
  static const auto* all = [] {
    auto* m = new std::map<std::string, Calibration>();
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      constexpr std::string_view kDir = "data/calibration/";
      if (f.path.rfind(kDir, 0) != 0) continue;
      std::string name(f.path.substr(kDir.size()));
      name = name.substr(0, name.rfind(".json"));
      m->emplace(name, LoadCalibration(name));
    }
    return m;
  }();
  static const Calibration kDefault;
  // `runtime` is resolved (ResolveRuntime): on a TPU it is the TPU's default.
  const std::string name = std::string(NameOf(runtime)) + (target.is_tpu() ? "-tpu" : "-gpu");
  auto it = all->find(name);
  return it == all->end() ? kDefault : it->second;
}

}  // namespace tpudoctor
