#include <algorithm>
#include <nlohmann/json.hpp>

#include "tpudoctor/report/render.h"
#include "tpudoctor/support/strings.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {
namespace {

std::string Num(const std::optional<double>& v, int digits) {
  return v ? FormatFixed(*v, digits) : "-";
}

std::string Cell(std::string s, std::size_t width, bool right = true) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

nlohmann::ordered_json Opt(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

}  // namespace

std::string RenderTargetsJson() {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const TargetSpec& t : AllTargets()) {
    arr.push_back(
        {{"name", t.name},
         {"display_name", t.display_name},
         {"kind", t.kind},
         {"bf16_tflops", Opt(t.bf16_tflops)},
         {"hbm_gib", Opt(t.hbm_gib)},
         {"hbm_gbps", Opt(t.hbm_gbps)},
         {"mxu_dim", t.mxu_dim ? nlohmann::ordered_json(*t.mxu_dim) : nlohmann::ordered_json()},
         {"price_usd_per_chip_hour", Opt(t.price_usd_per_chip_hour)},
         {"price_includes_host", t.price_includes_host},
         {"max_slice_chips", t.max_slice_chips ? nlohmann::ordered_json(*t.max_slice_chips)
                                               : nlohmann::ordered_json()}});
  }
  return nlohmann::ordered_json{{"schema_version", 1}, {"targets", arr}}.dump(2) + "\n";
}

std::string RenderTargetsText() {
  std::size_t width = 13;  // the longest name and a space
  for (const TargetSpec& t : AllTargets()) width = std::max(width, t.name.size() + 1);
  const int name_width = static_cast<int>(width);
  std::string out = Cell("target", name_width, false) + Cell("kind", 5, false) +
                    Cell("bf16 TFLOP/s", 13) + Cell("HBM GiB", 9) + Cell("dev/chip", 9) +
                    Cell("HBM GB/s", 10) + Cell("MXU", 9) + Cell("$/chip-h", 10) +
                    Cell("slice max", 10) + "  name\n";
  for (const TargetSpec& t : AllTargets()) {
    std::string mxu =
        t.mxu_dim ? std::to_string(*t.mxu_dim) + "x" + std::to_string(*t.mxu_dim) : "-";
    out += Cell(t.name, name_width, false) + Cell(t.kind, 5, false) +
           Cell(Num(t.bf16_tflops, 0), 13) + Cell(Num(t.hbm_gib, 0), 9) +
           Cell(std::to_string(std::max(1, t.devices_per_chip)), 9) + Cell(Num(t.hbm_gbps, 0), 10) +
           Cell(mxu, 9) + Cell(Num(t.price_usd_per_chip_hour, 2), 10) +
           Cell(t.max_slice_chips ? std::to_string(*t.max_slice_chips) : "-", 10) + "  " +
           t.display_name + "\n";
  }
  out +=
      "\nHBM and $ are per chip. A device (what a framework sees; batch and memory are per "
      "device)\nis a chip, or each TensorCore of a v2, v3 or TPU7x chip. Slice max: the most "
      "chips one slice\n(one ICI domain) has; more run as several slices over DCN (--slices).\n";
  out += "figures and their sources: data/targets/NAME.json; default target: " +
         std::string(kDefaultTarget) + "\n";
  return out;
}

}  // namespace tpudoctor
