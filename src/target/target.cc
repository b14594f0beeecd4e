#include "tpudoctor/target/target.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

using nlohmann::json;

template <typename T>
std::optional<T> Opt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

std::optional<DTypeSupport> ParseSupport(const std::string& s) {
  if (s == "native") return DTypeSupport::kNative;
  if (s == "slow") return DTypeSupport::kSlow;
  if (s == "unsupported") return DTypeSupport::kUnsupported;
  return std::nullopt;
}

TargetSpec ParseTarget(const json& j) {
  TargetSpec t;
  t.name = j.at("name").get<std::string>();
  t.display_name = j.value("display_name", t.name);
  t.kind = j.at("kind").get<std::string>();
  t.chips_per_host = j.value("chips_per_host", 1);
  t.cores_per_chip = j.value("cores_per_chip", 1);
  t.devices_per_chip = j.value("devices_per_chip", 1);
  t.mxu_per_core = Opt<int>(j, "mxu_per_core");
  t.mxu_dim = Opt<int>(j, "mxu_dim");
  if (auto it = j.find("peak_tflops"); it != j.end()) {
    t.bf16_tflops = Opt<double>(*it, "bf16");
    t.int8_tops = Opt<double>(*it, "int8");
    t.fp8_tflops = Opt<double>(*it, "fp8");
    t.fp32_tflops = Opt<double>(*it, "fp32");
  }
  t.hbm_gib = Opt<double>(j, "hbm_gib");
  t.hbm_gbps = Opt<double>(j, "hbm_gbps");
  t.ici_gbps = Opt<double>(j, "ici_gbps");
  t.price_usd_per_chip_hour = Opt<double>(j, "price_usd_per_chip_hour");
  if (auto it = j.find("dtypes"); it != j.end()) {
    for (const auto& [key, rule] : it->items()) {
      auto dtype = ParseDType(key);
      auto support = ParseSupport(rule.value("support", ""));
      if (!dtype || !support) continue;
      t.dtypes[*dtype] = {*support, rule.value("why", ""), rule.value("source", "")};
    }
  }
  if (auto it = j.find("sources"); it != j.end()) t.sources = it->get<std::vector<std::string>>();
  t.notes = j.value("notes", "");
  return t;
}

}  // namespace

DTypeRule TargetSpec::RuleFor(DType dtype) const {
  auto it = dtypes.find(dtype);
  if (it == dtypes.end()) return {};
  return it->second;
}

const std::vector<TargetSpec>& AllTargets() {
  static const auto* targets = [] {
    auto* out = new std::vector<TargetSpec>();
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.rfind("data/targets/", 0) != 0) continue;
      // The files are ours and tested; a malformed one is a build bug, caught by target_test.
      json j = json::parse(f.contents, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) continue;
      try {
        out->push_back(ParseTarget(j));
      } catch (const json::exception&) {
        continue;
      }
    }
    std::sort(out->begin(), out->end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
  return *targets;
}

Result<const TargetSpec*> FindTarget(const std::string& name) {
  std::string known;
  for (const TargetSpec& t : AllTargets()) {
    if (t.name == name) return &t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  return MakeError("unknown target `" + name + "`; known targets: " + known);
}

}  // namespace tpudoctor
