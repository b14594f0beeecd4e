#include "tpudoctor/target/target.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

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
    t.fp16_tflops = Opt<double>(*it, "fp16");
  }
  t.fp8_matmul_share = Opt<double>(j, "fp8_matmul_share");
  t.int8_matmul_share = Opt<double>(j, "int8_matmul_share");
  if (auto it = j.find("attention_kernels"); it != j.end() && it->is_object()) {
    for (const auto& [kernel, share] : it->items()) {
      if (share.is_number() && share.get<double>() > 0 && share.get<double>() <= 1)
        t.attention_kernels[kernel] = share.get<double>();
    }
  }
  t.hbm_gib = Opt<double>(j, "hbm_gib");
  t.hbm_gbps = Opt<double>(j, "hbm_gbps");
  t.ici_gbps = Opt<double>(j, "ici_gbps");
  t.collective_latency_us = Opt<double>(j, "collective_latency_us");
  t.dcn_gbps = Opt<double>(j, "dcn_gbps");
  t.scaleout_gbps = Opt<double>(j, "scaleout_gbps");
  t.calibration_siblings = j.value("calibration_siblings", std::vector<std::string>{});
  t.price_usd_per_chip_hour = Opt<double>(j, "price_usd_per_chip_hour");
  t.price_includes_host = j.value("price_includes_host", true);
  if (auto it = j.find("dtypes"); it != j.end()) {
    for (const auto& [key, rule] : it->items()) {
      auto dtype = ParseDType(key);
      auto support = ParseSupport(rule.value("support", ""));
      if (!dtype || !support) continue;
      t.dtypes[*dtype] = {*support, rule.value("why", ""), rule.value("source", "")};
    }
  }
  if (auto it = j.find("tiling"); it != j.end()) {
    TargetSpec::Tiling tl;
    tl.minor = it->value("minor", 128);
    tl.rank1_elements = it->value("rank1_elements", 1024);
    tl.pred_bytes = it->value("pred_bytes", 4);
    for (const auto& [bits, rows] : it->at("second_minor_by_bits").items()) {
      tl.second_minor_by_bits[std::stoi(bits)] = rows.get<int>();
    }
    t.tiling = tl;
  }
  t.fp32_matmul_passes = j.value("fp32_matmul_passes", 0);
  t.tf32 = j.value("tf32", false);
  t.slice_counts = j.value("slice_counts", "chips");
  t.max_slice_chips = Opt<int>(j, "max_slice_chips");
  if (auto it = j.find("sources"); it != j.end()) t.sources = it->get<std::vector<std::string>>();
  t.notes = j.value("notes", "");
  return t;
}

}  // namespace

std::string TargetSpec::Interconnect(int chips) const {
  if (is_tpu()) return "ICI";
  if (chips <= chips_per_host) return "NVLink";
  if (scaleout_gbps)
    return "NVLink within a host and InfiniBand between hosts (a group spanning hosts at the "
           "network's " +
           FormatFixed(*scaleout_gbps, 1) + " GB/s per GPU)";
  return "NVLink within a host and InfiniBand between hosts (modelled at NVLink's bandwidth: a "
         "lower bound)";
}

DTypeRule TargetSpec::RuleFor(DType dtype) const {
  auto it = dtypes.find(dtype);
  if (it == dtypes.end()) return {};
  return it->second;
}

const std::vector<std::string>& AttentionKernelNames() {
  static const std::vector<std::string> kNames = {"flash-attention-1", "flash-attention-2",
                                                  "flash-attention-3", "cudnn"};
  return kNames;
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
        // A variant (another memory size of one accelerator) is the base with its own fields.
        for (const json& variant : j.value("variants", json::array())) {
          json merged = j;
          merged.erase("variants");
          merged.update(variant);
          out->push_back(ParseTarget(merged));
        }
        out->push_back(ParseTarget(j));
      } catch (const std::exception&) {  // json errors, a non-numeric tiling key
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
  std::vector<std::string> names;
  for (const TargetSpec& t : AllTargets()) {
    if (t.name == name) return &t;
    names.push_back(t.name);
  }
  std::string message = "unknown target `" + name + "`";
  if (auto close = ClosestMatch(name, names)) message += " (did you mean `" + *close + "`?)";
  return MakeError(message + "; known targets: " + Join(names, ", "));
}

}  // namespace tpudoctor

namespace tpudoctor {

namespace {

// The names users type, as tpu-doctor's: Google Cloud's accelerator types (`v3-8`,
// `v5litepod-16`, `v5p-128`, `v6e-8`, `tpu7x-64`) and bare GPU names (`h100-8`, `gb200-72`: any
// `nvidia-` target's name without the prefix).
std::string CanonicalTargetName(std::string name) {
  name = AsciiLower(name);
  constexpr std::string_view kVendor = "nvidia-";
  for (const TargetSpec& t : AllTargets()) {
    if (t.name.starts_with(kVendor) && name.starts_with(t.name.substr(kVendor.size())))
      return std::string(kVendor) + name;
  }
  for (const char* prefix : {"tpu-v5litepod", "v5litepod", "tpu-v5lite", "v5lite"}) {
    if (name.starts_with(prefix)) {
      name = "tpu-v5e" + name.substr(std::string_view(prefix).size());
      break;
    }
  }
  for (const char* prefix : {"tpu-tpu7x", "tpu7x", "tpu-v7x", "v7x", "tpu-ironwood", "ironwood"}) {
    if (name.starts_with(prefix)) {
      name = "tpu-7x" + name.substr(std::string_view(prefix).size());
      break;
    }
  }
  if (name.size() > 1 && name[0] == 'v' && std::isdigit(static_cast<unsigned char>(name[1])))
    name = "tpu-" + name;
  return name;
}

}  // namespace

Result<SliceTarget> FindSliceTarget(const std::string& given) {
  const std::string name = CanonicalTargetName(given);
  if (auto exact = FindTarget(name); exact) return SliceTarget{*exact, 1, given};
  const auto dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 >= name.size()) return FindTarget(given).error();
  const std::string count_text = name.substr(dash + 1);
  if (count_text.find_first_not_of("0123456789") != std::string::npos || count_text.size() > 6) {
    return FindTarget(given).error();
  }
  auto base = FindTarget(name.substr(0, dash));
  if (!base) {
    // A slice of a mistyped generation: suggest the slice (`tpuv5e-8` → `tpu-v5e-8`).
    std::vector<std::string> names;
    for (const TargetSpec& t : AllTargets()) names.push_back(t.name);
    std::string message = "unknown target `" + given + "`";
    if (auto close = ClosestMatch(name.substr(0, dash), names)) {
      message += " (did you mean `" + *close + "-" + count_text + "`?)";
    }
    return MakeError(message + "; known targets: " + Join(names, ", ") +
                     ", or a slice of one (tpu-v5e-8)");
  }
  const int count = std::stoi(count_text);
  const int per_chip = (*base)->slice_counts == "cores" ? std::max(1, (*base)->cores_per_chip) : 1;
  if (count < 1 || count % per_chip != 0) {
    return MakeError("slice `" + name + "`: " + (*base)->name + " slices count " +
                     (*base)->slice_counts + ", so the size must be a positive multiple of " +
                     std::to_string(per_chip));
  }
  const int chips = count / per_chip;
  if (const auto most = (*base)->max_slice_chips; most && chips > *most) {
    return MakeError("slice `" + name + "`: a " + (*base)->name + " slice has at most " +
                     std::to_string(*most) + " chips (" + (*base)->name + "-" +
                     std::to_string(*most * per_chip) +
                     "); run a larger job as several slices over the data-centre network "
                     "(--slices N)");
  }
  return SliceTarget{*base, chips, given};
}

}  // namespace tpudoctor
