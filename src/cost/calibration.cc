// Calibrations: the efficiency factors of each runtime family on TPUs and GPUs
// (data/calibration/*.json, each with its source), read once; a file a user passes with
// --calibration goes through the same reader.
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

// Reads the fields `j` sets over `c` (a family's calibration for a generation file, the defaults
// otherwise).
Calibration FromJson(const nlohmann::json& j, const std::string& name, Calibration c = {}) {
  c.name = j.value("name", name);
  c.fitted_for = j.value("fitted_for", c.fitted_for);
  c.matrix_efficiency = j.value("matrix_efficiency", c.matrix_efficiency);
  if (j.contains("conv_efficiency")) c.conv_efficiency = j.at("conv_efficiency").get<double>();
  if (j.contains("attention_efficiency"))
    c.attention_efficiency = j.at("attention_efficiency").get<double>();
  c.depthwise_efficiency = j.value("depthwise_efficiency", c.depthwise_efficiency);
  if (j.contains("depthwise_memory_efficiency"))
    c.depthwise_memory_efficiency = j.at("depthwise_memory_efficiency").get<double>();
  if (j.contains("depthwise_backward_ratio"))
    c.depthwise_backward_ratio = j.at("depthwise_backward_ratio").get<double>();
  c.fused_attention = j.value("fused_attention", c.fused_attention);
  c.fused_activations = j.value("fused_activations", c.fused_activations);
  c.memory_efficiency = j.value("memory_efficiency", c.memory_efficiency);
  c.matrix_memory_overlap = j.value("matrix_memory_overlap", c.matrix_memory_overlap);
  c.kernel_overhead_us = j.value("kernel_overhead_us", c.kernel_overhead_us);
  c.step_overhead_us = j.value("step_overhead_us", c.step_overhead_us);
  c.host_op_us = j.value("host_op_us", c.host_op_us);
  c.backward_ratio = j.value("backward_ratio", c.backward_ratio);
  c.matrix_backward_ratio = j.value("matrix_backward_ratio", c.matrix_backward_ratio);
  c.attention_backward_ratio = j.value("attention_backward_ratio", c.attention_backward_ratio);
  c.saved_activation_share = j.value("saved_activation_share", c.saved_activation_share);
  c.saved_matrix_share = j.value("saved_matrix_share", c.saved_matrix_share);
  c.fp8_saves_quantized_inputs =
      j.value("fp8_saves_quantized_inputs", c.fp8_saves_quantized_inputs);
  c.conv_rate_ignores_precision =
      j.value("conv_rate_ignores_precision", c.conv_rate_ignores_precision);
  if (j.contains("channels_last_conv_efficiency"))
    c.channels_last_conv_efficiency = j.at("channels_last_conv_efficiency").get<double>();
  c.grouped_tile_rows = j.value("grouped_tile_rows", c.grouped_tile_rows);
  c.grouped_tile_cols = j.value("grouped_tile_cols", c.grouped_tile_cols);
  c.grouped_matmul_efficiency = j.value("grouped_matmul_efficiency", c.grouped_matmul_efficiency);
  c.expert_token_passes = j.value("expert_token_passes", c.expert_token_passes);
  c.attention_block = j.value("attention_block", c.attention_block);
  c.transient_factor = j.value("transient_factor", c.transient_factor);
  c.fixed_memory_bytes = j.value("fixed_memory_bytes", c.fixed_memory_bytes);
  c.usable_hbm_share = j.value("usable_hbm_share", c.usable_hbm_share);
  if (j.contains("serving_reserved_bytes"))
    c.serving_reserved_bytes = j.at("serving_reserved_bytes").get<double>();
  c.ici_share = j.value("ici_share", c.ici_share);
  c.source = j.value("source", "");
  return c;
}

struct CalibrationFiles {
  std::map<std::string, Calibration> families;        // RUNTIME-tpu, RUNTIME-gpu
  std::map<std::string, nlohmann::json> generations;  // RUNTIME-TARGET: factors fitted to it
};

// Every embedded calibration file: the families read, the generation files kept as JSON to be
// laid over their family (`"family": "xla-tpu"`). A file that does not parse is left out.
CalibrationFiles LoadCalibrationFiles() {
  CalibrationFiles out;
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    constexpr std::string_view kDir = "data/calibration/";
    if (f.path.rfind(kDir, 0) != 0 || !f.path.ends_with(".json")) continue;
    auto j = nlohmann::json::parse(f.contents, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    std::string name(f.path.substr(kDir.size()));
    name.resize(name.size() - 5);
    try {
      if (j.contains("family")) {
        out.generations.emplace(name, std::move(j));
      } else {
        out.families.emplace(name, FromJson(j, name));
      }
    } catch (const nlohmann::json::exception&) {
    }
  }
  return out;
}

// A family's calibration on one target: each factor from the nearest generation that fitted it
// (the target itself, then its siblings in order), else the family's; the source says which.
Calibration ForTarget(const CalibrationFiles& files, const Calibration& family,
                      const std::string& runtime, const TargetSpec& target) {
  std::vector<std::string> chain = {target.name};
  chain.insert(chain.end(), target.calibration_siblings.begin(), target.calibration_siblings.end());
  Calibration c = family;
  std::map<std::string, std::string> fitted_to;  // factor -> generation
  std::map<std::string, std::string> sources;    // generation -> its source
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto file = files.generations.find(runtime + "-" + *it);
    if (file == files.generations.end() || file->second.value("family", "") != family.name)
      continue;
    try {
      c = FromJson(file->second, family.name, c);
    } catch (const nlohmann::json::exception&) {
      continue;
    }
    for (const auto& [key, value] : file->second.items()) {
      if (key != "family" && key != "fitted_for" && key != "source" && key != "name")
        fitted_to[key] = *it;
    }
    sources[*it] = file->second.value("source", "");
  }
  c.name = family.name;
  c.source = family.source;
  c.fitted_for.clear();
  std::map<std::string, std::vector<std::string>> by_generation;
  for (const auto& [key, generation] : fitted_to) by_generation[generation].push_back(key);
  for (const auto& [generation, keys] : by_generation) {
    std::string fields;
    for (const std::string& k : keys) fields += (fields.empty() ? "" : ", ") + k;
    c.source +=
        "; " + fields + " fitted to " + generation + "'s published runs" +
        (generation == target.name ? ""
                                   : " (" + target.name + " has none: its nearest sibling's)") +
        ": " + sources[generation];
    if (generation == target.name || c.fitted_for.empty()) c.fitted_for = generation;
  }
  return c;
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
  static const auto* files = new CalibrationFiles(LoadCalibrationFiles());
  static std::mutex mutex;
  static auto* by_target = new std::map<std::string, Calibration>();
  static const Calibration kDefault;
  // `runtime` is resolved (ResolveRuntime): on a TPU it is the TPU's default.
  const std::string runtime_name(NameOf(runtime));
  auto family = files->families.find(runtime_name + (target.is_tpu() ? "-tpu" : "-gpu"));
  if (family == files->families.end()) return kDefault;
  const std::lock_guard<std::mutex> lock(mutex);
  const std::string key = runtime_name + "|" + target.name;
  auto it = by_target->find(key);
  if (it == by_target->end())
    it = by_target->emplace(key, ForTarget(*files, family->second, runtime_name, target)).first;
  return it->second;
}

}  // namespace tpudoctor
