#include "tpudoctor/jobs/catalog.h"

#include <nlohmann/json.hpp>

#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

using nlohmann::json;

constexpr const char* kCatalogPath = "data/jobs/tpu_catalog.json";

TpuGeneration FromJson(const json& g) {
  TpuGeneration t;
  t.target = g.at("target").get<std::string>();
  t.name_prefix = g.at("name_prefix").get<std::string>();
  t.name_counts_cores = g.at("name_counts").get<std::string>() == "cores";
  t.runtime = g.at("runtime").get<std::string>();
  t.tf_runtime = g.value("tf_runtime", "");
  t.chips_per_vm = g.value("chips_per_vm", 4);
  t.single_host_max_chips = g.value("single_host_max_chips", t.chips_per_vm);
  const json& v = g.at("vertex");
  t.vertex_machine_type = v.value("machine_type", "");
  if (v.contains("machine_types")) {
    for (const auto& [chips, type] : v.at("machine_types").items())
      t.vertex_machine_types[std::stoi(chips)] = type.get<std::string>();
  }
  t.vertex_multi_host_machine_type = v.value("multi_host_machine_type", "");
  t.vertex_accelerator_type = v.value("accelerator_type", "");
  if (v.contains("accelerator_counts"))
    t.vertex_accelerator_counts = v.at("accelerator_counts").get<std::vector<int>>();
  if (const json& k = g.at("gke"); k.is_object()) {
    t.gke_accelerator = k.at("accelerator").get<std::string>();
    t.gke_chips_per_node = k.value("chips_per_node", 4);
  }
  t.zones = g.at("zones").get<std::vector<std::string>>();
  for (const json& s : g.at("slices"))
    t.slices.push_back({s.at("chips").get<int>(), s.at("topology").get<std::string>()});
  return t;
}

const json& CatalogJson() {
  static const json* j = new json(json::parse(*FindEmbedded(kCatalogPath)));
  return *j;
}

}  // namespace

std::string TpuGeneration::AcceleratorType(int chips) const {
  return name_prefix + "-" + std::to_string(name_counts_cores ? chips * 2 : chips);
}

const TpuSlice* TpuGeneration::SliceWithChips(int chips) const {
  for (const TpuSlice& s : slices) {
    if (s.chips == chips) return &s;
  }
  return nullptr;
}

const TpuSlice* TpuGeneration::SliceWithTopology(const std::string& topology) const {
  for (const TpuSlice& s : slices) {
    if (s.topology == topology) return &s;
  }
  return nullptr;
}

int TpuGeneration::Hosts(int chips) const {
  if (chips <= single_host_max_chips) return 1;
  return (chips + chips_per_vm - 1) / chips_per_vm;
}

std::string TpuGeneration::VertexMachineType(int chips) const {
  if (!vertex_machine_type.empty()) return vertex_machine_type;
  if (chips <= single_host_max_chips) {
    auto it = vertex_machine_types.find(chips);
    return it == vertex_machine_types.end() ? "" : it->second;
  }
  return vertex_multi_host_machine_type;
}

const std::vector<TpuGeneration>& TpuCatalog() {
  static const auto* all = [] {
    auto* v = new std::vector<TpuGeneration>();
    for (const json& g : CatalogJson().at("generations")) v->push_back(FromJson(g));
    return v;
  }();
  return *all;
}

const TpuGeneration* FindGeneration(const std::string& target) {
  for (const TpuGeneration& g : TpuCatalog()) {
    if (g.target == target) return &g;
  }
  return nullptr;
}

std::optional<AcceleratorMatch> ParseAcceleratorType(const std::string& name) {
  const std::size_t dash = name.rfind('-');
  if (dash == std::string::npos) return std::nullopt;
  const std::string prefix = name.substr(0, dash), count = name.substr(dash + 1);
  if (count.empty() || count.size() > 5 ||
      count.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int n = std::stoi(count);
  for (const TpuGeneration& g : TpuCatalog()) {
    if (g.name_prefix != prefix) continue;
    const int chips = g.name_counts_cores ? n / 2 : n;
    if ((g.name_counts_cores && n % 2 != 0) || g.SliceWithChips(chips) == nullptr)
      return std::nullopt;
    return AcceleratorMatch{&g, chips};
  }
  return std::nullopt;
}

std::string CatalogDate() { return CatalogJson().value("as_of", ""); }

}  // namespace tpudoctor
