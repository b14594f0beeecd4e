// ReadJobSpec: job files → JobSpec. Structured files (YAML/JSON) are walked key by key; anything
// else is read line by line as a launch script with a few patterns for the settings that matter.
#include <re2/re2.h>

#include <algorithm>

#include "src/support/json_input.h"
#include "src/support/yaml_input.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/support/strings.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxJobBytes = std::size_t{4} << 20;

std::optional<std::int64_t> AsInt(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.size() < 12 && s.find_first_not_of("0123456789") == std::string::npos)
      return std::stoll(s);
  }
  return std::nullopt;
}
std::string AsString(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  return "";
}

// camelCase and snake_case spell the same field.
std::string Canonical(std::string_view key) {
  std::string out = AsciiLower(key);
  std::erase_if(out, [](char c) { return c == '_' || c == '-'; });
  return out;
}

bool IsTpuMachine(const std::string& machine, const std::string& accelerator) {
  return machine == "cloud-tpu" || machine.starts_with("ct") || accelerator.starts_with("TPU_");
}

// The patterns of job settings, compiled once (RE2::PartialMatch given pattern text compiles it on
// every call, and a script is matched line by line).
struct Patterns {
  const RE2 global_batch_flag{R"(--global[_-]batch(?:[_-]size)?(?:[= ]|["'],.*default=)(\d+))"};
  // Hugging Face's Trainer spells it --per_device_train_batch_size.
  const RE2 per_device_batch_flag{
      R"(--per[_-](?:device|core|replica)[_-](?:train[_-])?batch(?:[_-]size)?(?:[= ]|["'],.*default=)(\d+(?:\.\d+)?))"};
  // A batch flag that does not say whose batch it is.
  const RE2 batch_size_flag{R"(--(?:train[_-])?batch[_-]size(?:[= ]|["'],.*default=)(\d+))"};
  const RE2 tensor_parallel_flag{
      R"((?:ici_tensor_parallelism|tensor[_-]parallel(?:ism)?)[= ](\d{1,5}))"};
  const RE2 fsdp_parallel_flag{R"(ici_fsdp_parallelism[= ](\d{1,5}))"};
  const RE2 remat_flag{R"(--remat[= ](none|dots|layer|full|offload)\b)"};
  const RE2 vertex_accelerator{R"((?i)accelerator[-_]type["']?\s*[:= ]\s*["']?(TPU_[A-Z0-9_]+))"};
  const RE2 gce_accelerator{
      R"((?i)accelerator[-_]type["']?\s*[:= ]\s*["']?((?:v|tpu)[0-9][a-z0-9]*-[0-9]+))"};
  const RE2 machine_type{R"((?i)machine[-_]type["']?\s*[:= ]\s*["']?((?:ct|cloud-tpu)[a-z0-9-]*))"};
  const RE2 accelerator_count{R"((?i)accelerator[-_]count["']?\s*[:= ]\s*(\d+))"};
  const RE2 tpu_topology{R"((?i)tpu[-_]topology["']?\s*[:= ]\s*["']?(\d+x\d+(?:x\d+)?))"};
  const RE2 replica_count{R"((?i)replica[-_]count["']?\s*[:= ]\s*(\d+))"};
  const RE2 zone{R"((?:--zone[= ]+|\bZONE=)["']?([a-z]+-[a-z]+\d+-[a-z0-9]+))"};
  const RE2 runtime_version{
      R"((?:--version|--runtime-version|RUNTIME_VERSION=)[= ]*["']?([A-Za-z0-9._-]+))"};
  const RE2 xmp_nprocs{R"(xmp\.spawn\(.*\bnprocs\s*=\s*(\d+))"};
  const RE2 tf_batch_call{R"(\.batch\(([^)]*)\))"};
  const RE2 global_batch{R"((?i)\bglobal[_-]batch(?:[_-]size)?["']?\s*[:=]\s*(\d+(?:\.\d+)?))"};
  const RE2 per_device_batch{
      R"((?i)\bper[_-](?:device|core|replica)[_-](?:train[_-])?batch(?:[_-]size)?["']?\s*[:=]\s*(\d+(?:\.\d+)?))"};
  const RE2 batch_size{R"((?i)\bbatch[_-]size["']?\s*[:=]\s*(\d+))"};
};

const Patterns& P() {
  static const Patterns* patterns = new Patterns();
  return *patterns;
}

// A fractional per-device batch (tensor parallelism: 0.25 per chip) is not an integer batch.
void SetBatch(const std::string& value, const std::string& where, const char* field,
              std::optional<std::int64_t>& slot, JobSpec& spec) {
  if (slot || value.find('.') != std::string::npos || value.size() > 9) return;
  slot = std::stoll(value);
  spec.where[field] = where;
}

// Flags of a training command line (`--per_device_batch=4`, `--global_batch 32`, `--batch_size=8`,
// `--ici_tensor_parallelism=4`), or their argparse defaults in a script.
void ReadArgs(const std::string& text, const std::string& where, JobSpec& spec) {
  std::string value;
  if (RE2::PartialMatch(text, P().global_batch_flag, &value))
    SetBatch(value, where, "global_batch", spec.global_batch, spec);
  if (RE2::PartialMatch(text, P().per_device_batch_flag, &value))
    SetBatch(value, where, "per_device_batch", spec.per_device_batch, spec);
  if (RE2::PartialMatch(text, P().batch_size_flag, &value))
    SetBatch(value, where, "batch_size", spec.batch_size, spec);
  if (RE2::PartialMatch(text, P().tensor_parallel_flag, &value)) {
    spec.tensor_parallel = std::max(1, std::stoi(value));
    spec.where["tensor_parallel"] = where;
  }
  if (RE2::PartialMatch(text, P().fsdp_parallel_flag, &value)) {
    spec.fsdp_parallel = std::max(1, std::stoi(value));
    spec.where["fsdp_parallel"] = where;
  }
  if (RE2::PartialMatch(text, P().remat_flag, &value)) {
    spec.remat = value;
    spec.where["remat"] = where;
  }
}

class Walker {
 public:
  explicit Walker(JobSpec& spec) : spec_(spec) {}
  // The first field of the wrong type, as `path: expected ...`.
  const std::optional<std::string>& error() const { return error_; }

  void Walk(const json& j, const std::string& path) {
    if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) Walk(j[i], path + "[" + std::to_string(i) + "]");
      return;
    }
    if (j.is_string()) {
      ReadArgs(j.get<std::string>(), path, spec_);
      return;
    }
    if (!j.is_object()) return;
    for (const auto& [key, value] : j.items()) {
      const std::string p = path.empty() ? key : path + "." + key;
      const std::string k = Canonical(key);
      if (k == "machinespec" && !value.is_object()) {
        Fail(p + ": expected a mapping (machineType, tpuTopology, ...)");
      } else if (k == "machinespec") {
        Pool(j, value, p);
      } else if (key == "cloud.google.com/gke-tpu-accelerator") {
        Set("gke_accelerator", spec_.gke_accelerator, AsString(value), p);
      } else if (key == "cloud.google.com/gke-tpu-topology") {
        Set("topology", spec_.topology, AsString(value), p);
      } else if (key == "google.com/tpu" && !AsInt(value)) {
        Fail(p + ": expected a number of chips");
      } else if (key == "google.com/tpu" && !spec_.gke_tpu_per_node) {
        spec_.gke_tpu_per_node = AsInt(value);
        spec_.where["gke_tpu_per_node"] = p;
      } else if (k == "parallelism" && !spec_.gke_hosts) {
        spec_.gke_hosts = AsInt(value);
        spec_.where["gke_hosts"] = p;
      } else if (k == "name" && value.is_string() && value.get<std::string>() == "XRT_TPU_CONFIG") {
        spec_.xrt_runtime = true;
      } else if (k == "zone" || k == "location" || k == "region") {
        if (k == "zone") Set("zone", spec_.zone, AsString(value), p);
      }
      Walk(value, p);
    }
  }

 private:
  void Set(const char* field, std::string& slot, const std::string& value, const std::string& p) {
    if (!slot.empty() || value.empty()) return;
    slot = value;
    spec_.where[field] = p;
  }

  // A Vertex AI worker pool: the first one with a TPU machine is the one checked.
  void Pool(const json& pool, const json& machine, const std::string& p) {
    std::string type, accel, topology;
    std::optional<std::int64_t> count;
    for (const auto& [key, value] : machine.items()) {
      const std::string k = Canonical(key);
      const bool text = k == "machinetype" || k == "acceleratortype" || k == "tputopology";
      if (text && !value.is_string()) Fail(p + "." + key + ": expected a string");
      if (k == "acceleratorcount" && !AsInt(value)) Fail(p + "." + key + ": expected an integer");
      if (k == "machinetype") type = AsString(value);
      if (k == "acceleratortype") accel = AsString(value);
      if (k == "acceleratorcount") count = AsInt(value);
      if (k == "tputopology") topology = AsString(value);
    }
    if (!IsTpuMachine(type, accel) || !spec_.vertex_machine_type.empty() ||
        !spec_.vertex_accelerator_type.empty())
      return;
    spec_.kind = "vertex-custom-job";
    Set("vertex_machine_type", spec_.vertex_machine_type, type, p + ".machineType");
    Set("vertex_accelerator_type", spec_.vertex_accelerator_type, accel, p + ".acceleratorType");
    Set("topology", spec_.topology, topology, p + ".tpuTopology");
    if (count) {
      spec_.vertex_accelerator_count = count;
      spec_.where["vertex_accelerator_count"] = p + ".acceleratorCount";
    }
    for (const auto& [key, value] : pool.items()) {
      if (Canonical(key) == "replicacount" && !AsInt(value)) {
        Fail(key + ": expected an integer");
      } else if (Canonical(key) == "replicacount") {
        spec_.replica_count = AsInt(value);
        const std::size_t dot = p.rfind('.');
        spec_.where["replica_count"] = (dot == std::string::npos ? "" : p.substr(0, dot + 1)) + key;
      }
    }
  }

  void Fail(const std::string& why) {
    if (!error_) error_ = why;
  }

  JobSpec& spec_;
  std::optional<std::string> error_;
};

// A launch script: each pattern's first match, with its line.
void ReadScript(std::string_view text, JobSpec& spec) {
  spec.kind = "launch-script";
  int line_no = 0;
  const bool tf = text.find("TPUStrategy") != std::string_view::npos;
  for (std::string_view raw : SplitLines(text)) {
    ++line_no;
    const std::string line(raw);
    const std::string where = "line " + std::to_string(line_no);
    std::string v;
    auto set = [&](const char* field, std::string& slot) {
      if (slot.empty()) {
        slot = v;
        spec.where[field] = where;
      }
    };
    auto set_int = [&](const char* field, std::optional<std::int64_t>& slot) {
      if (!slot && v.size() < 10) {
        slot = std::stoll(v);
        spec.where[field] = where;
      }
    };
    if (RE2::PartialMatch(line, P().vertex_accelerator, &v))
      set("vertex_accelerator_type", spec.vertex_accelerator_type);
    else if (RE2::PartialMatch(line, P().gce_accelerator, &v))
      set("accelerator_type", spec.accelerator_type);
    if (RE2::PartialMatch(line, P().machine_type, &v))
      set("vertex_machine_type", spec.vertex_machine_type);
    if (RE2::PartialMatch(line, P().accelerator_count, &v))
      set_int("vertex_accelerator_count", spec.vertex_accelerator_count);
    if (RE2::PartialMatch(line, P().tpu_topology, &v)) set("topology", spec.topology);
    if (RE2::PartialMatch(line, P().replica_count, &v))
      set_int("replica_count", spec.replica_count);
    if (RE2::PartialMatch(line, P().zone, &v)) set("zone", spec.zone);
    if (RE2::PartialMatch(line, P().runtime_version, &v))
      set("runtime_version", spec.runtime_version);
    if (RE2::PartialMatch(line, P().xmp_nprocs, &v)) set_int("xmp_nprocs", spec.xmp_nprocs);
    if (line.find("xmp.spawn(") != std::string::npos) spec.xmp_spawn = true;
    if (line.find("XRT_TPU_CONFIG") != std::string::npos) spec.xrt_runtime = true;
    if (line.find("TPUStrategy") != std::string::npos) spec.tpu_strategy = true;
    if (RE2::PartialMatch(line, P().tf_batch_call, &v) &&
        v.find("drop_remainder=True") == std::string::npos &&
        v.find("drop_remainder = True") == std::string::npos) {
      spec.batch_without_drop_remainder = true;
      spec.where["batch_without_drop_remainder"] = where;
    }
    if (RE2::PartialMatch(line, P().global_batch, &v))
      SetBatch(v, where, "global_batch", spec.global_batch, spec);
    if (RE2::PartialMatch(line, P().per_device_batch, &v))
      SetBatch(v, where, "per_device_batch", spec.per_device_batch, spec);
    // A plain batch_size is global under TPUStrategy (it splits each batch over the replicas),
    // per device in a torch_xla DataLoader.
    if (RE2::PartialMatch(line, P().batch_size, &v))
      set_int(tf ? "global_batch" : "per_device_batch",
              tf ? spec.global_batch : spec.per_device_batch);
    ReadArgs(line, where, spec);
  }
}

}  // namespace

// The slice the fields name, when the catalog lists it.
void ResolveJobSlice(JobSpec& spec) {
  if (auto m = ParseAcceleratorType(spec.accelerator_type)) {
    spec.generation = m->generation;
    spec.chips = m->chips;
    return;
  }
  for (const TpuGeneration& g : TpuCatalog()) {
    const bool machine =
        !spec.vertex_machine_type.empty() &&
        (spec.vertex_machine_type == g.vertex_machine_type ||
         spec.vertex_machine_type == g.vertex_multi_host_machine_type ||
         std::any_of(g.vertex_machine_types.begin(), g.vertex_machine_types.end(),
                     [&](const auto& kv) { return kv.second == spec.vertex_machine_type; }));
    const bool accel = !spec.vertex_accelerator_type.empty() &&
                       spec.vertex_accelerator_type == g.vertex_accelerator_type;
    const bool gke = !spec.gke_accelerator.empty() && spec.gke_accelerator == g.gke_accelerator;
    if (spec.vertex_machine_type == "cloud-tpu" && !accel) continue;  // v2 and v3 share it
    if (!machine && !accel && !gke) continue;
    spec.generation = &g;
    if (const TpuSlice* s = g.SliceWithTopology(spec.topology)) {
      spec.chips = s->chips;
    } else if (spec.vertex_accelerator_count && !g.vertex_accelerator_counts.empty()) {
      spec.chips = static_cast<int>(*spec.vertex_accelerator_count / 2);
    }
    return;
  }
}

namespace {

bool Structured(const Source& source) {
  const std::string& n = source.display_name;
  if (n.ends_with(".yaml") || n.ends_with(".yml") || n.ends_with(".json")) return true;
  if (n.ends_with(".py") || n.ends_with(".sh")) return false;
  const std::size_t first = source.bytes.find_first_not_of(" \t\r\n");
  return first != std::string::npos &&
         (source.bytes[first] == '{' || source.bytes.compare(first, 10, "apiVersion") == 0 ||
          source.bytes.compare(first, 15, "workerPoolSpecs") == 0);
}

bool Empty(const JobSpec& s) {
  return s.accelerator_type.empty() && s.vertex_machine_type.empty() &&
         s.vertex_accelerator_type.empty() && s.gke_accelerator.empty() && s.topology.empty() &&
         !s.xmp_spawn && !s.tpu_strategy && !s.global_batch && !s.per_device_batch &&
         s.runtime_version.empty();
}

}  // namespace

Result<JobSpec> ReadJobSpec(const Source& source) {
  const std::string& what = source.display_name;
  if (source.bytes.empty()) return MakeError(what + ": file is empty, expected a job file");
  if (source.bytes.size() > kMaxJobBytes)
    return MakeError(what + ": larger than a job file can be (4 MiB)");
  if (source.bytes.find('\0') != std::string::npos)
    return MakeError(what + ": binary data, expected a YAML/JSON job spec or a launch script");
  JobSpec spec;
  spec.file = what;
  const std::size_t first = source.bytes.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    return MakeError(what +
                     ": holds only whitespace, expected a YAML/JSON job spec or a launch "
                     "script");
  if (Structured(source)) {
    const bool json_text = what.ends_with(".json") || source.bytes[first] == '{';
    auto doc = json_text ? ParseJsonInput(source.bytes, what) : ParseYamlInput(source.bytes, what);
    if (!doc) return doc.error();
    if (!doc->is_object() && !doc->is_array())
      return MakeError(what + ": expected a job spec (a mapping), found a single value");
    spec.kind = "gke-manifest";
    Walker walker(spec);
    walker.Walk(*doc, "");
    if (walker.error()) return MakeError(what + ": " + *walker.error());
    if (!spec.vertex_machine_type.empty() || !spec.vertex_accelerator_type.empty())
      spec.kind = "vertex-custom-job";
  } else {
    ReadScript(source.bytes, spec);
  }
  if (Empty(spec)) {
    return MakeError(what +
                     ": no TPU request or training settings found (expected a Vertex AI CustomJob "
                     "spec, a GKE manifest with TPU node selectors, or a launch script)");
  }
  ResolveJobSlice(spec);
  return spec;
}

}  // namespace tpudoctor
