#include "src/cost/saved_tensors.h"

#include <cmath>
#include <set>

namespace tpudoctor {

SavedTensors ComputeSavedTensors(const Graph& g, const std::vector<OpCost>& costs,
                                 const GraphFacts& facts, const Calibration& cal,
                                 const TargetSpec& target, int eb) {
  SavedTensors st;
  std::set<std::pair<ValueId, int>> kept;
  auto runtime = [&](ValueId v) {
    if (v == kNoValue) return false;
    const Value& val = g.value(v);
    return val.origin != ValueOrigin::kInitializer && !val.known_ints && IsFloat(val.type.dtype);
  };
  const Node* keeper = nullptr;
  auto keep = [&](ValueId v, int width) {
    if (v == kNoValue || !kept.insert({v, width}).second) return;
    const TensorType& t = g.value(v).type;
    auto natural = TensorBytes(t, std::abs(width));
    auto layout = LayoutBytes(t, target, std::abs(width), facts.channels_minor(g.value(v)));
    if (!natural || !layout) return;
    st.saved += *layout;
    if (IsMatrixKind(keeper->kind)) st.matrix += *layout;
    st.by_layer[facts.layer[static_cast<std::size_t>(keeper->id)]] += *layout;
    st.natural += *natural;
    st.layout += *layout;
  };
  for (NodeId id : g.topo_order()) {
    const std::size_t i = static_cast<std::size_t>(id);
    const Node& n = g.node(id);
    // A fused activation (GraphFacts) keeps, in this accounting, what its exported ops would:
    // counting only its input fitted the H100 measurements worse (docs/cost-model.md).
    if (costs[i].cls == CostClass::kFree || (cal.fused_attention && facts.attention[i])) continue;
    keeper = &n;
    for (ValueId out : n.outputs) {
      if (auto b = LayoutBytes(g.value(out).type, target, eb, facts.channels_minor(g.value(out))))
        st.largest = std::max(st.largest, *b);
    }
    switch (n.kind) {
      case OpKind::kMatMul:
      case OpKind::kConv:
      case OpKind::kConvTranspose:
      case OpKind::kRecurrent:
        for (ValueId in : n.inputs) {
          if (runtime(in)) keep(in, eb);
        }
        if (facts.implied_batchnorm[i] && !n.outputs.empty()) {
          keep(n.outputs[0], eb);   // the BatchNorm's input
          keep(n.outputs[0], -eb);  // its output (the next op's input), a tensor of the same size
        }
        break;
      case OpKind::kElementwise:
        if (n.traits.saves == Saves::kInput) {
          if (runtime(n.input(0))) keep(n.input(0), eb);
        } else if (n.traits.saves == Saves::kOperands) {
          if (runtime(n.input(0)) && runtime(n.input(1))) {
            keep(n.input(0), eb);
            keep(n.input(1), eb);
          }
        }
        break;
      case OpKind::kNormalization:
        if (runtime(n.input(0))) keep(n.input(0), 4);
        break;
      case OpKind::kSoftmax:
        if (!n.outputs.empty()) keep(n.outputs[0], 4);
        break;
      case OpKind::kPool:
        if (n.traits.saves == Saves::kInput && runtime(n.input(0))) keep(n.input(0), eb);
        break;
      default:
        break;
    }
  }
  return st;
}

}  // namespace tpudoctor
