#include "src/cost/sharding.h"

#include <algorithm>
#include <charconv>

#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// `layers.3`, `layer_3`, `3` (after `layer/`); not `layer1` (a stage of four blocks).
bool IsNumbered(std::string_view component) {
  const std::size_t sep = component.find_last_of("._");
  const std::string_view number =
      sep == std::string_view::npos ? component : component.substr(sep + 1);
  return !number.empty() && number.find_first_not_of("0123456789") == std::string_view::npos;
}

double Ring(int n) { return n > 1 ? static_cast<double>(n - 1) / n : 0; }

}  // namespace

std::string LayerKey(std::string_view scope) {
  std::size_t pos = 0;
  while (pos < scope.size()) {
    const std::size_t start = scope[pos] == '/' ? pos + 1 : pos;
    const std::size_t end = std::min(scope.find('/', start), scope.size());
    const std::string_view component = scope.substr(start, end - start);
    if (IsNumbered(component)) return std::string(scope.substr(0, end));
    pos = end;
  }
  return "";
}

Result<Parallelism> ParseParallelism(std::string_view text) {
  Parallelism p;
  auto bad = [&](const std::string& why) {
    return MakeError("--parallel " + std::string(text) + ": " + why +
                     " (expected e.g. fsdp=16,tp=4 with keys data, fsdp, tp, ep, cp, pp, vp)");
  };
  for (std::string_view part : Split(text, ',')) {
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) return bad("`" + std::string(part) + "` has no `=`");
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    int n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > 65536)
      return bad("`" + std::string(value) + "` is not a degree from 1 to 65536");
    if (key == "data" || key == "dp") {
      p.data = n;
    } else if (key == "fsdp") {
      p.fsdp = n;
    } else if (key == "tensor" || key == "tp") {
      p.tensor = n;
    } else if (key == "expert" || key == "ep") {
      p.expert = n;
    } else if (key == "context" || key == "cp") {
      p.context = n;
    } else if (key == "pipeline" || key == "pp") {
      p.pipeline = n;
    } else if (key == "virtual" || key == "vp") {
      p.virtual_stages = n;
    } else {
      return bad("unknown axis `" + std::string(key) + "`");
    }
  }
  if (p.virtual_stages > 1 && p.pipeline < 2)
    return bad("virtual pipeline stages (vp) interleave a pipeline: give pp too");
  return p;
}

std::string ToString(const Parallelism& p) {
  std::vector<std::string> parts;
  if (p.data > 1) parts.push_back("data=" + std::to_string(p.data));
  if (p.fsdp > 1) parts.push_back("fsdp=" + std::to_string(p.fsdp));
  if (p.tensor > 1) parts.push_back("tp=" + std::to_string(p.tensor));
  if (p.expert > 1) parts.push_back("ep=" + std::to_string(p.expert));
  if (p.context > 1) parts.push_back("cp=" + std::to_string(p.context));
  if (p.pipeline > 1) parts.push_back("pp=" + std::to_string(p.pipeline));
  if (p.virtual_stages > 1) parts.push_back("vp=" + std::to_string(p.virtual_stages));
  return parts.empty() ? "data=1" : Join(parts, ",");
}

std::optional<Remat> ParseRemat(std::string_view name) {
  if (name == "none") return Remat::kNone;
  if (name == "dots" || name == "minimal") return Remat::kDots;
  if (name == "layer" || name == "full") return Remat::kLayer;
  if (name == "offload") return Remat::kOffload;
  if (name == "save_dot_except_mlpwi") return Remat::kDotsExceptMlpUp;
  return std::nullopt;
}

std::string_view NameOf(Remat r) {
  switch (r) {
    case Remat::kNone:
      return "none";
    case Remat::kDots:
      return "dots";
    case Remat::kLayer:
      return "layer";
    case Remat::kOffload:
      return "offload";
    case Remat::kDotsExceptMlpUp:
      return "save_dot_except_mlpwi";
  }
  return "none";
}

std::optional<DcnParallelism> ParseDcnParallelism(std::string_view name) {
  if (name == "data") return DcnParallelism::kData;
  if (name == "fsdp") return DcnParallelism::kFsdp;
  return std::nullopt;
}

std::string_view NameOf(DcnParallelism d) { return d == DcnParallelism::kFsdp ? "fsdp" : "data"; }

Result<Parallelism> ResolveParallelism(Parallelism p, int chips) {
  std::string axes = "fsdp x tp";
  if (p.expert > 1) axes += " x ep";
  if (p.context > 1) axes += " x cp";
  if (p.pipeline > 1) axes += " x pp";
  // Each degree is at most 65536 (ParseParallelism): their product, in a double, is above the
  // chips exactly when the true product is (it is exact up to 2^53).
  const double product = static_cast<double>(p.fsdp) * p.tensor * p.expert * p.context * p.pipeline;
  if (product > chips) {
    return MakeError(axes + " = " + FormatFixed(product, 0) + " does not divide the " +
                     std::to_string(chips) + " chips of the slice");
  }
  const auto sharded = static_cast<long long>(product);
  if (p.data == 0) {
    if (sharded > chips || chips % sharded != 0) {
      return MakeError(axes + " = " + std::to_string(sharded) + " does not divide the " +
                       std::to_string(chips) + " chips of the slice");
    }
    p.data = static_cast<int>(chips / sharded);
  }
  if (sharded * p.data != chips) {
    return MakeError("data x " + axes + " = " + std::to_string(sharded * p.data) +
                     " but the slice has " + std::to_string(chips) + " chips");
  }
  return p;
}

namespace {

// Whether a group whose devices, with the axes inside it, span `extent` consecutive devices
// crosses hosts over a scale-out network (GPUs; a TPU slice is one ICI domain).
bool SpansHosts(const CollectiveInputs& in, double extent) {
  return in.scaleout_bytes_s > 0 && in.devices_per_host > 0 &&
         extent > static_cast<double>(in.devices_per_host);
}

// The bandwidth such a group runs its ring at: the slower of its links.
double GroupLink(const CollectiveInputs& in, double extent) {
  return SpansHosts(in, extent) ? std::min(in.link_bytes_s, in.scaleout_bytes_s) : in.link_bytes_s;
}

// How many of a group's `n` devices, `stride` apart, one host holds.
double GroupDevicesPerHost(const CollectiveInputs& in, int n, double stride) {
  return std::clamp(in.devices_per_host / stride, 1.0, static_cast<double>(n));
}

// Seconds per byte of an exchange over a group spanning hosts whose bytes leave, `network` of
// them, through the scale-out network while `nvlink` of them cross NVLink at the same time: the
// slower of the two bounds it.
double SplitExchangeSeconds(const CollectiveInputs& in, double extent, double network,
                            double nvlink) {
  return std::max(network / GroupLink(in, extent), nvlink / in.link_bytes_s);
}

// Seconds per byte a device exchanges in an all-to-all over a group of `n` devices `stride`
// apart: each sends the other (n - 1) / n of its bytes. Where the group spans hosts, the bytes
// for its peers on other hosts take the network, those for its own host's NVLink.
double AllToAllShare(const CollectiveInputs& in, int n, double stride) {
  if (n <= 1) return 0;
  const double extent = stride * n;
  if (!SpansHosts(in, extent)) return Ring(n) / in.link_bytes_s;
  const double per_host = GroupDevicesPerHost(in, n, stride);
  return SplitExchangeSeconds(in, extent, (n - per_host) / n, (per_host - 1) / n);
}

// The probability that a token's `k` experts, drawn without repeats from a layer's `experts`,
// include at least one of a given `held` of them: 1 - C(experts - held, k) / C(experts, k).
double HitProbability(double experts, double held, double k) {
  double miss = 1;
  for (int i = 0; i < static_cast<int>(k); ++i) {
    if (experts - held - i <= 0) return 1;
    miss *= (experts - held - i) / (experts - i);
  }
  return 1 - miss;
}

// Seconds of a token exchange over an expert group of `n` devices, `stride` devices apart, per
// byte of one copy per routed expert (CollectiveInputs::expert_exchange_bytes). Without dedup,
// every copy bound for another device leaves (AllToAllShare). With it, a token goes once to each
// other device that holds one of its experts and, between hosts, once to each other host that
// does (balanced routing: its experts uniform over the layer's), the hosts' NVLink carrying the
// copies on to their devices.
double ExpertExchangeShare(const CollectiveInputs& in, int n, double stride) {
  const double k = in.experts_per_token, experts = in.experts;
  if (!in.dedup_dispatch || n <= 1 || k < 1 || experts < k) return AllToAllShare(in, n, stride);
  const double device_copies = (n - 1) * HitProbability(experts, experts / n, k) / k;
  const double extent = stride * n;
  if (!SpansHosts(in, extent)) return device_copies / in.link_bytes_s;
  const double hosts = n / GroupDevicesPerHost(in, n, stride);
  const double host_copies = (hosts - 1) * HitProbability(experts, experts / hosts, k) / k;
  return SplitExchangeSeconds(in, extent, host_copies, device_copies);
}

}  // namespace

CollectiveTimes Collectives(const CollectiveInputs& in) {
  CollectiveTimes t;
  if (in.link_bytes_s <= 0) return t;
  const Parallelism& p = in.parallel;
  // Each axis's group spans the devices of the axes inside it times its own degree.
  const double tensor_extent = p.tensor;
  const double context_extent = tensor_extent * p.context;
  const double expert_extent = context_extent * p.expert;
  const double fsdp_extent = expert_extent * p.fsdp;
  const double data_extent = fsdp_extent * p.data;
  // Expert parallelism: each device keeps (1/ep) of its routed tokens for its own experts and
  // sends the rest, then takes the results back, at its links' bandwidth (the all-to-all's
  // injection bound; a torus's bisection can be tighter: stated in the assumptions).
  t.expert_s =
      ExpertExchangeShare(in, p.expert, context_extent) * in.expert_exchange_bytes * in.passes;
  // The experts' state is sharded over the expert axis as well; the rest is replicated on it.
  const double dense = in.param_count - in.expert_param_count;
  const double per_device = dense + in.expert_param_count / p.expert;
  // Context parallelism: each device gathers the other (cp-1)/cp of the sequence's keys and
  // values for every attention pass (forward, recomputed forward); backward it gathers them again
  // and reduce-scatters their gradients.
  const int attention_passes = in.passes - (in.passes > 2 && !in.attention_recomputed ? 1 : 0);
  t.context_s = Ring(p.context) * in.context_kv_bytes * (in.train ? attention_passes + 1 : 1) /
                GroupLink(in, context_extent);
  // The parameters are sharded over FSDP and the context axis alike (MaxText's `embed` rule):
  // one group gathers them. Megatron keeps them whole on the context group, which reduces the
  // gradients with the data replicas instead.
  const int gather = p.fsdp * (in.distributed_optimizer ? 1 : p.context);
  const int replicas = p.data * (in.distributed_optimizer ? p.context : 1);
  const double fsdp_link = GroupLink(in, fsdp_extent);
  const double tensor_link = GroupLink(in, tensor_extent);
  // Pipeline stages: adjacent stages sit a whole stage's devices apart.
  if (p.pipeline > 1)
    t.stage_send_s = (in.train ? 2 : 1) * in.stage_send_bytes / GroupLink(in, data_extent + 1);
  // Inference: tensor parallelism all-reduces the activations forward; FSDP gathers the
  // weights once.
  if (!in.train) {
    t.fsdp_s = Ring(gather) * per_device / p.tensor * in.weight_bytes_per_param / fsdp_link;
    t.tensor_s = 2 * Ring(p.tensor) * in.tensor_allreduce_bytes / tensor_link;
    return t;
  }
  // Each chip holds 1/(fsdp x cp x tp) of the parameters (of the experts', 1/ep of that). The
  // dense gradients are all-reduced over the data replicas and the expert axis, which splits the
  // batch too; the experts' over the data replicas only.
  const double sharded = static_cast<double>(gather) * p.tensor;
  // An all-reduce moves each gradient twice; the distributed optimizer's reduce-scatter moves it
  // once and its all-gather of the updated weights moves each weight once.
  const double exchanged_bytes =
      (in.distributed_optimizer ? in.grad_bytes_per_param + in.weight_bytes_per_param
                                : 2 * in.grad_bytes_per_param) *
      in.trainable_share;
  t.data_s =
      (Ring(replicas * p.expert) * dense + Ring(replicas) * in.expert_param_count / p.expert) /
      sharded * exchanged_bytes / GroupLink(in, data_extent);
  const double full = per_device / p.tensor;  // what an FSDP group gathers
  t.fsdp_s = Ring(gather) * full *
             (2 * in.weight_bytes_per_param + in.grad_bytes_per_param * in.trainable_share) /
             fsdp_link;
  t.tensor_s = 2 * Ring(p.tensor) * in.tensor_allreduce_bytes / tensor_link;
  return t;
}

}  // namespace tpudoctor
