// TpuCatalog: what Cloud TPU, Vertex AI and GKE call each TPU generation — accelerator-type names
// and their topologies, chips per VM, runtime (software) versions, Vertex AI machine types and
// accelerator enums, GKE node labels, and the zones that have it. The facts live in
// data/jobs/tpu_catalog.json (embedded), each group with its source; `plan` emits job files from
// them and `check --job` checks job files against them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor {

struct TpuSlice {
  int chips = 0;
  std::string topology;  // "4x4", "2x2x1"
};

struct TpuGeneration {
  std::string target;              // "tpu-v5e" (data/targets)
  std::string name_prefix;         // "v5litepod": accelerator types are `v5litepod-16`
  bool name_counts_cores = false;  // v2/v3/v4/v5p names count TensorCores (2 per chip)
  std::string runtime;             // --version for PyTorch and JAX
  std::string tf_runtime;          // a TensorFlow runtime of this generation
  int chips_per_vm = 4;            // hosts of a multi-host slice
  int single_host_max_chips = 4;   // the largest slice on one VM
  // Vertex AI: either one machine type with an accelerator count (v2/v3: cloud-tpu, TPU_V3, 8), or
  // a machine type per chips on a VM and tpu_topology.
  std::string vertex_machine_type;                  // single machine type (v2/v3/v4/v5p)
  std::map<int, std::string> vertex_machine_types;  // chips per VM → machine type (v5e/v6e)
  std::string vertex_multi_host_machine_type;
  std::string vertex_accelerator_type;         // MachineSpec.acceleratorType enum
  std::vector<int> vertex_accelerator_counts;  // allowed acceleratorCount (v2/v3)
  std::string gke_accelerator;                 // cloud.google.com/gke-tpu-accelerator; empty: none
  int gke_chips_per_node = 4;
  std::vector<std::string> zones;
  std::vector<TpuSlice> slices;

  // `v5litepod-16`, `v5p-128` (cores), `v3-8` for a slice of `chips` chips.
  std::string AcceleratorType(int chips) const;
  const TpuSlice* SliceWithChips(int chips) const;
  const TpuSlice* SliceWithTopology(const std::string& topology) const;
  int Hosts(int chips) const;  // VMs of a slice
  // The Vertex AI machine type for a slice of `chips` chips; empty when Vertex has none.
  std::string VertexMachineType(int chips) const;
};

// All generations of the catalog, in its order (oldest first).
const std::vector<TpuGeneration>& TpuCatalog();
const TpuGeneration* FindGeneration(const std::string& target);  // "tpu-v5e"
// The generation and chips of an accelerator type (`v5litepod-16`, `v5p-128`, `v6e-8`);
// nullopt when the name is not one the catalog lists.
struct AcceleratorMatch {
  const TpuGeneration* generation = nullptr;
  int chips = 0;
};
std::optional<AcceleratorMatch> ParseAcceleratorType(const std::string& name);
// The catalog's date ("2025-09") and its sources, for messages.
std::string CatalogDate();

}  // namespace tpudoctor
