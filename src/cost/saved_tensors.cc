#include "src/cost/saved_tensors.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace tpudoctor {
namespace {

// The values a fused kernel reads from outside itself.
std::vector<ValueId> KernelInputs(const Graph& g, const FusionKernel& k) {
  std::set<NodeId> members(k.nodes.begin(), k.nodes.end());
  members.insert(k.duplicated.begin(), k.duplicated.end());
  std::vector<ValueId> inputs;
  for (NodeId id : k.nodes) {
    for (ValueId in : g.node(id).inputs) {
      if (in != kNoValue && !members.contains(g.value(in).producer) &&
          std::ranges::find(inputs, in) == inputs.end())
        inputs.push_back(in);
    }
  }
  return inputs;
}

// Whether every op that reads `v` is a loss: a softmax-kind op that reduces to fewer dims
// (softmax cross-entropy, negative log-likelihood).
bool FeedsOnlyLoss(const Graph& g, ValueId v) {
  const auto& users = g.value(v).users;
  const Shape& in = g.value(v).type.shape;
  return !users.empty() && in.rank_known() && std::ranges::all_of(users, [&](NodeId u) {
    const Node& n = g.node(u);
    if (n.kind != OpKind::kSoftmax || n.outputs.empty() || n.input(0) != v) return false;
    const Shape& out = g.value(n.outputs[0]).type.shape;
    return out.rank_known() && out.rank() < in.rank();
  });
}

}  // namespace

SavedTensors ComputeSavedTensors(const Graph& g, const std::vector<OpCost>& costs,
                                 const GraphFacts& facts, const Calibration& cal,
                                 const TargetSpec& target, int eb, int weight_input_bytes,
                                 const FusionPlan* fusion, const std::vector<bool>& written,
                                 const std::vector<bool>& frozen) {
  SavedTensors st;
  std::set<std::pair<ValueId, int>> kept;
  auto runtime = [&](ValueId v) {
    if (v == kNoValue) return false;
    const Value& val = g.value(v);
    return val.origin != ValueOrigin::kInitializer && !val.known_ints && IsFloat(val.type.dtype);
  };
  // Where the layers end in the topological order: what no layer keeps after it is the head.
  std::optional<std::size_t> last_layered;
  for (std::size_t pos = 0; pos < g.topo_order().size(); ++pos) {
    if (!facts.layer[static_cast<std::size_t>(g.topo_order()[pos])].empty()) last_layered = pos;
  }
  const Node* keeper = nullptr;
  SavedPart* part = nullptr;
  auto keep = [&](ValueId v, int width) {
    if (v == kNoValue || !kept.insert({v, width}).second) return;
    const TensorType& t = g.value(v).type;
    auto natural = TensorBytes(t, std::abs(width));
    auto layout = LayoutBytes(t, target, std::abs(width), facts.channels_minor(g.value(v)));
    if (!natural || !layout) return;
    st.saved += *layout;
    if (IsMatrixKind(keeper->kind)) st.matrix += *layout;
    if (facts.mlp_down[static_cast<std::size_t>(keeper->id)]) st.mlp_down_inputs += *layout;
    part->saved += *layout;
    st.natural += *natural;
    st.layout += *layout;
  };
  // Under a compiler that fuses, a tensor computed by cheap ops that never leaves its kernel is
  // not kept: the backward pass computes it again inside its own fusion from what the kernel read
  // and from the kernel's matmul/convolution results (kept: running a matmul again is not cheap,
  // XLA writes them as extra outputs of the fusion instead).
  std::map<int, std::vector<ValueId>> kernel_inputs;  // by kernel index, computed once
  auto save = [&](ValueId v, int width) {
    const NodeId producer = v == kNoValue ? kNoNode : g.value(v).producer;
    const int kernel = fusion != nullptr && producer != kNoNode
                           ? fusion->kernel_of[static_cast<std::size_t>(producer)]
                           : -1;
    if (kernel < 0 || written[static_cast<std::size_t>(v)] ||
        costs[static_cast<std::size_t>(producer)].cls == CostClass::kMatrix)
      return keep(v, width);
    const FusionKernel& k = fusion->kernels[static_cast<std::size_t>(kernel)];
    auto inputs = kernel_inputs.find(kernel);  // several of a kernel's values may be saved
    if (inputs == kernel_inputs.end())
      inputs = kernel_inputs.emplace(kernel, KernelInputs(g, k)).first;
    for (ValueId in : inputs->second) {
      if (runtime(in)) keep(in, eb);
    }
    for (NodeId m : k.nodes) {
      if (costs[static_cast<std::size_t>(m)].cls == CostClass::kMatrix)
        keep(g.node(m).outputs.front(), eb);
    }
  };
  for (std::size_t pos = 0; pos < g.topo_order().size(); ++pos) {
    const NodeId id = g.topo_order()[pos];
    const std::size_t i = static_cast<std::size_t>(id);
    const Node& n = g.node(id);
    // A fused activation (GraphFacts) keeps, in this accounting, what its exported ops would:
    // counting only its input fitted the H100 measurements worse (docs/cost-model.md).
    if (costs[i].cls == CostClass::kFree || (cal.fused_attention && facts.attention[i])) continue;
    keeper = &n;
    const std::string& layer = facts.layer[i];
    part = layer.empty() && last_layered && pos > *last_layered ? &st.head : &st.by_layer[layer];
    for (ValueId out : n.outputs) {
      if (auto b = LayoutBytes(g.value(out).type, target, eb, facts.channels_minor(g.value(out)))) {
        st.largest = std::max(st.largest, *b);
        if (*b > part->largest) part->largest_feeds_loss = FeedsOnlyLoss(g, out);
        part->largest = std::max(part->largest, *b);
      }
    }
    switch (n.kind) {
      case OpKind::kMatMul:
      case OpKind::kConv:
      case OpKind::kConvTranspose:
      case OpKind::kRecurrent: {
        // A weight matmul's input may be kept as its quantized copy (weight_input_bytes).
        const bool weighted =
            weight_input_bytes > 0 && n.kind == OpKind::kMatMul &&
            std::ranges::any_of(n.inputs, [&](ValueId in) {
              return in != kNoValue && g.value(in).origin == ValueOrigin::kInitializer;
            });
        const bool keeps_input = i >= frozen.size() || !frozen[i];
        for (ValueId in : n.inputs) {
          if (keeps_input && runtime(in)) save(in, weighted ? weight_input_bytes : eb);
        }
        if (facts.implied_batchnorm[i] && !n.outputs.empty()) {
          save(n.outputs[0], eb);   // the BatchNorm's input
          save(n.outputs[0], -eb);  // its output (the next op's input), a tensor of the same size
        }
        break;
      }
      case OpKind::kElementwise:
        if (n.traits.saves == Saves::kInput) {
          if (runtime(n.input(0))) save(n.input(0), eb);
        } else if (n.traits.saves == Saves::kOperands) {
          if (runtime(n.input(0)) && runtime(n.input(1))) {
            save(n.input(0), eb);
            save(n.input(1), eb);
          }
        }
        break;
      case OpKind::kNormalization:
        if (runtime(n.input(0))) save(n.input(0), 4);
        break;
      case OpKind::kSoftmax:
        if (!n.outputs.empty()) save(n.outputs[0], 4);
        break;
      case OpKind::kPool:
        if (n.traits.saves == Saves::kInput && runtime(n.input(0))) save(n.input(0), eb);
        break;
      default:
        break;
    }
  }
  return st;
}

}  // namespace tpudoctor
