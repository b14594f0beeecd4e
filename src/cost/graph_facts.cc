#include "src/cost/graph_facts.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "src/cost/sharding.h"

namespace tpudoctor {
namespace {

bool IsPointwiseLink(const Node& n) {
  return n.kind == OpKind::kElementwise || n.kind == OpKind::kCast || n.op == Op::kDropout ||
         n.op == Op::kIdentity;
}

// A value stored in the model: an initializer or a Constant's output.
bool IsLiteral(const Graph& g, ValueId v) {
  if (v == kNoValue) return false;
  const Value& val = g.value(v);
  return val.origin == ValueOrigin::kInitializer ||
         (val.producer != kNoNode && g.node(val.producer).kind == OpKind::kConstant);
}

// Marks the nodes from the QK^T matmul's output to the PV matmul's input: scale, mask, softmax,
// dropout. Their S x S tensors are never materialized by a fused attention kernel.
void MarkAttention(const Graph& g, GraphFacts& f) {
  for (NodeId id : g.topo_order()) {
    const Node& sm = g.node(id);
    if (sm.kind != OpKind::kSoftmax || sm.inputs.empty() || sm.outputs.empty()) continue;
    std::vector<NodeId> chain = {id};
    // Backwards to the score matmul.
    ValueId v = sm.input(0);
    bool found_qk = false;
    for (int step = 0; step < 6 && v != kNoValue; ++step) {
      NodeId p = g.value(v).producer;
      if (p == kNoNode) break;
      const Node& pn = g.node(p);
      if (pn.op == Op::kMatMul) {
        found_qk = true;
        break;
      }
      if (!IsPointwiseLink(pn)) break;
      chain.push_back(p);
      v = pn.input(0);
    }
    // Forwards to the value matmul.
    bool found_pv = false;
    ValueId w = sm.outputs[0];
    for (int step = 0; step < 4 && !found_pv; ++step) {
      const auto& users = g.value(w).users;
      if (users.size() != 1) break;
      const Node& un = g.node(users[0]);
      if (un.op == Op::kMatMul) {
        found_pv = true;
        break;
      }
      if (!IsPointwiseLink(un) || un.outputs.empty()) break;
      chain.push_back(un.id);
      w = un.outputs[0];
    }
    if (!found_qk || !found_pv) continue;
    // Fused attention kernels (PyTorch SDPA, flash attention) compute softmax(QK^T * scale +
    // mask)V: require the scale, in the chain or on the query/key inputs of the score matmul.
    // Attention written without it (T5's unscaled scores plus a position bias) runs unfused in
    // eager code.
    auto is_scale = [&](NodeId id2) {
      const Node& x = g.node(id2);
      if (x.op != Op::kMul && x.op != Op::kDiv) return false;
      return std::ranges::any_of(x.inputs, [&](ValueId in) { return IsLiteral(g, in); });
    };
    bool scaled = std::any_of(chain.begin(), chain.end(), is_scale);
    const Node& qk = g.node(g.value(v).producer);
    for (ValueId in : qk.inputs) {
      if (in == kNoValue || scaled) continue;
      NodeId p = g.value(in).producer;
      for (int step = 0; step < 3 && p != kNoNode && !scaled;
           ++step) {  // through a transpose/reshape
        scaled = is_scale(p);
        const Node& pn = g.node(p);
        p = pn.inputs.empty() || pn.input(0) == kNoValue ? kNoNode : g.value(pn.input(0)).producer;
      }
    }
    if (!scaled) continue;
    for (NodeId c : chain) f.attention[static_cast<std::size_t>(c)] = true;
    f.any_attention = true;
  }
}

// Where an attention core takes its Q, K and V: an Attention op, or a matmul of two activations
// at either end of a marked softmax(QK^T)V chain (the scores' QK^T, the context's PV).
bool IsCoreMatmul(const Graph& g, const GraphFacts& f, const Node& n) {
  if (n.op != Op::kMatMul || n.inputs.size() < 2 || n.outputs.empty()) return false;
  if (IsLiteral(g, n.input(0)) || IsLiteral(g, n.input(1))) return false;
  for (NodeId u : g.value(n.outputs[0]).users) {
    if (f.attention[static_cast<std::size_t>(u)]) return true;  // QK^T
  }
  for (ValueId in : n.inputs) {
    const NodeId p = in == kNoValue ? kNoNode : g.value(in).producer;
    if (p != kNoNode && f.attention[static_cast<std::size_t>(p)]) return true;  // PV
  }
  return false;
}

bool IsCore(const Graph& g, const GraphFacts& f, const Node& n) {
  return n.op == Op::kAttention || IsCoreMatmul(g, f, n);
}

// Ops between a projection and the core: reshapes and transposes into heads, a bias, RoPE.
bool IsProjectionLink(const Node& n) { return n.kind == OpKind::kLayout || IsPointwiseLink(n); }

// Whether a walk from `start` meets a node `is_target(node, value it was reached by)` accepts,
// passing only through nodes `is_link` accepts: forward along users (a link passes on its
// outputs), backward along producers (a link passes on its inputs). At most `hops` links deep and
// kVisits values wide, so that a graph of many layout ops costs little.
template <typename Link, typename Target>
bool Reaches(const Graph& g, ValueId start, bool forward, int hops, Link is_link,
             Target is_target) {
  constexpr std::size_t kVisits = 64;
  std::vector<std::pair<ValueId, int>> queue = {{start, 0}};
  for (std::size_t i = 0; i < queue.size() && i < kVisits; ++i) {
    const auto [v, depth] = queue[i];
    if (v == kNoValue) continue;
    const Value& value = g.value(v);
    std::vector<NodeId> next = value.users;
    if (!forward)
      next = value.producer == kNoNode ? std::vector<NodeId>{} : std::vector{value.producer};
    for (NodeId id : next) {
      const Node& n = g.node(id);
      if (is_target(n, v)) return true;
      if (depth >= hops || !is_link(n)) continue;
      for (ValueId w : forward ? n.outputs : n.inputs) queue.emplace_back(w, depth + 1);
    }
  }
  return false;
}

// Whether a core is reached from `v` through projection links only, forward (users) or backward
// (producers). An export reaches K through more links than Q (RoPE, then GQA's expand and
// reshapes).
bool ReachesCore(const Graph& g, const GraphFacts& f, ValueId v, bool forward) {
  return Reaches(g, v, forward, 12, IsProjectionLink,
                 [&](const Node& n, ValueId) { return IsCore(g, f, n); });
}

// Marks the weight matmuls whose output reaches a core (Q, K, V) or whose data input comes from
// one (O), through reshapes, transposes and pointwise ops only.
void MarkAttentionProjections(const Graph& g, GraphFacts& f) {
  const bool any_core = f.any_attention || std::ranges::any_of(g.nodes(), [](const Node& n) {
                          return n.op == Op::kAttention;
                        });
  if (!any_core) return;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::kMatMul || n.inputs.size() < 2 || n.outputs.empty() ||
        !IsLiteral(g, n.input(1)) || IsLiteral(g, n.input(0)))
      continue;
    const bool input = ReachesCore(g, f, n.outputs[0], true);
    const bool projection = input || ReachesCore(g, f, n.input(0), false);
    f.attention_projection[static_cast<std::size_t>(n.id)] = projection;
    f.attention_input_projection[static_cast<std::size_t>(n.id)] = input;
    f.any_attention_projection |= projection;
  }
}

// Whether `n` is one expert projection of an MoE layer with `experts` experts: a matmul of a
// [experts, slots, in] activation with a [experts, in, out] weight.
bool IsExpertMatmul(const Graph& g, const Node& n, std::int64_t experts) {
  if (n.op != Op::kMatMul || n.inputs.size() < 2 || n.input(0) == kNoValue ||
      !IsLiteral(g, n.input(1)))
    return false;
  const Shape& x = g.value(n.input(0)).type.shape;
  const Shape& w = g.value(n.input(1)).type.shape;
  return x.rank_known() && w.rank_known() && x.rank() == 3 && w.rank() == 3 &&
         x.dim(0).is_static() && w.dim(0).is_static() && x.dim(0).value() == experts &&
         w.dim(0).value() == experts;
}

// Whether `v` was computed from an expert matmul's output through pointwise ops (the gated
// MLP's act(gate) x up between the experts' projections), or (forward) whether an expert matmul
// reads it, directly or through pointwise ops.
bool PointwiseLinkedToExperts(const Graph& g, const GraphFacts& f, ValueId v, bool forward) {
  return Reaches(g, v, forward, 4, IsPointwiseLink, [&](const Node& n, ValueId) {
    return f.expert_matmul[static_cast<std::size_t>(n.id)];
  });
}

// Whether `v` reaches an expert matmul's data input (forward) or comes from an expert matmul's
// output (backward) through layout ops only: the reshapes and transposes between [batch, experts
// x capacity, hidden] and [experts, batch x capacity, hidden].
bool LayoutLinkedToExperts(const Graph& g, const GraphFacts& f, ValueId v, bool forward) {
  return Reaches(
      g, v, forward, 4, [](const Node& n) { return n.kind == OpKind::kLayout; },
      [&](const Node& n, ValueId via) {
        return f.expert_matmul[static_cast<std::size_t>(n.id)] && (!forward || n.input(0) == via);
      });
}

// The dispatch and combine matmuls of capacity dispatch (two activations, linked to the experts
// by layout ops) and, from the dispatch's shapes — [batch, experts x capacity, seq] x [batch,
// seq, hidden] — how full the experts' slots are: seq x experts_per_token of experts x capacity.
void MarkDispatch(const Graph& g, GraphFacts& f) {
  for (const Node& n : g.nodes()) {
    if (n.op != Op::kMatMul || n.inputs.size() < 2 || n.outputs.empty() || n.input(0) == kNoValue ||
        n.input(1) == kNoValue || IsLiteral(g, n.input(0)) || IsLiteral(g, n.input(1)))
      continue;
    const bool dispatch = LayoutLinkedToExperts(g, f, n.outputs[0], true);
    const bool combine = std::ranges::any_of(
        n.inputs, [&](ValueId in) { return LayoutLinkedToExperts(g, f, in, false); });
    if (!dispatch && !combine) continue;
    f.moe_dispatch[static_cast<std::size_t>(n.id)] = true;
    const Shape& mask = g.value(n.input(0)).type.shape;
    const std::int64_t k = g.facts().experts_per_token;
    if (dispatch && k > 0 && mask.rank_known() && mask.rank() == 3 && mask.is_static()) {
      const double slots = static_cast<double>(mask.dim(1).value());
      const double seq = static_cast<double>(mask.dim(2).value());
      if (slots > 0) f.expert_fill = std::min(1.0, seq * static_cast<double>(k) / slots);
    }
  }
}

void MarkExperts(const Graph& g, GraphFacts& f) {
  const std::int64_t experts = g.facts().experts;
  if (experts < 2) return;
  for (const Node& n : g.nodes())
    f.expert_matmul[static_cast<std::size_t>(n.id)] = IsExpertMatmul(g, n, experts);
  auto elements = [&](ValueId v) {
    const auto e = g.value(v).type.shape.NumElements();
    return e ? static_cast<double>(*e) : 0.0;
  };
  std::vector<bool> sent(g.values().size(), false);  // gate and up read the same tokens
  for (const Node& n : g.nodes()) {
    if (!f.expert_matmul[static_cast<std::size_t>(n.id)]) continue;
    f.expert_params += elements(n.input(1));
    const auto in = static_cast<std::size_t>(n.input(0));
    if (!sent[in] && !PointwiseLinkedToExperts(g, f, n.input(0), false)) {
      sent[in] = true;
      f.expert_exchange_elements += elements(n.input(0));
    }
    if (!n.outputs.empty() && !PointwiseLinkedToExperts(g, f, n.outputs[0], true))
      f.expert_exchange_elements += elements(n.outputs[0]);
  }
  MarkDispatch(g, f);
  f.grouped_experts = std::ranges::any_of(f.expert_matmul, [](bool e) { return e; }) &&
                      std::ranges::none_of(f.moe_dispatch, [](bool d) { return d; });
}

// A scalar literal operand of a pointwise op, as in x / 1.4142.
bool IsConstantScalar(const Graph& g, ValueId v) {
  if (!IsLiteral(g, v)) return false;
  const auto n = g.value(v).type.shape.NumElements();
  return n && *n <= 1;
}

// The one user of `v`, if it has exactly one.
NodeId SoleUser(const Graph& g, ValueId v) {
  const auto& users = g.value(v).users;
  return users.size() == 1 ? users[0] : kNoNode;
}

// Marks the activations PyTorch's nn.GELU and nn.SiLU compute in one kernel each, which
// torch.onnx writes out as x * 0.5 * (1 + erf(x / sqrt 2)) and x * sigmoid(x): eager PyTorch
// launches one kernel that reads x and writes the result once. (A model that spells them out in
// Python runs every op; the modules are what torchvision and transformers use.)
void MarkActivations(const Graph& g, GraphFacts& f) {
  auto mark = [&](const std::vector<NodeId>& inner, NodeId root) {
    for (NodeId id : inner) f.inside_activation[static_cast<std::size_t>(id)] = true;
    f.activation_root[static_cast<std::size_t>(root)] = true;
    f.any_activation = true;
  };
  for (const Node& n : g.nodes()) {
    if (n.inputs.empty() || n.outputs.size() != 1 || n.input(0) == kNoValue) continue;
    if (n.op == Op::kSigmoid) {
      const ValueId x = n.input(0);
      const NodeId mul = SoleUser(g, n.outputs[0]);
      if (mul == kNoNode || g.node(mul).op != Op::kMul) continue;
      const Node& m = g.node(mul);
      if (std::ranges::count(m.inputs, x) != 1 || m.outputs.size() != 1) continue;
      mark({n.id}, mul);
      continue;
    }
    if (n.op != Op::kErf) continue;
    // Back through the scale by 1/sqrt(2) to x.
    const NodeId scale = g.value(n.input(0)).producer;
    if (scale == kNoNode) continue;
    const Node& sc = g.node(scale);
    if ((sc.op != Op::kDiv && sc.op != Op::kMul) || sc.inputs.size() != 2 ||
        !IsConstantScalar(g, sc.input(1)) || SoleUser(g, sc.outputs[0]) != n.id)
      continue;
    const ValueId x = sc.input(0);
    // Forward through + 1, * x and * 0.5, in the order the export wrote them.
    std::vector<NodeId> inner = {scale, n.id};
    NodeId root = n.id;
    bool times_x = false;
    for (int step = 0; step < 3; ++step) {
      const NodeId next = SoleUser(g, g.node(root).outputs[0]);
      if (next == kNoNode) break;
      const Node& nx = g.node(next);
      if ((nx.op != Op::kAdd && nx.op != Op::kMul) || nx.outputs.size() != 1) break;
      const ValueId other = nx.input(0) == g.node(root).outputs[0] ? nx.input(1) : nx.input(0);
      const bool is_x = other == x && nx.op == Op::kMul;
      if (!is_x && !IsConstantScalar(g, other)) break;
      times_x |= is_x;
      inner.push_back(next);
      root = next;
    }
    if (!times_x) continue;
    inner.pop_back();  // the root is the op that writes the activation
    mark(inner, root);
  }
}

void MarkLoraTargets(const Graph& g, GraphFacts& f) {
  f.weight_matmul.assign(g.nodes().size(), false);
  f.lora_width.assign(g.nodes().size(), 0.0);
  for (const Node& n : g.nodes()) {
    const auto i = static_cast<std::size_t>(n.id);
    if (n.kind != OpKind::kMatMul || n.op == Op::kAttention || n.inputs.size() < 2 ||
        n.input(1) == kNoValue)
      continue;
    const Value& w = g.value(n.input(1));
    if (w.origin != ValueOrigin::kInitializer || !IsFloat(w.type.dtype)) continue;
    f.weight_matmul[i] = true;
    if (!f.layer[i].empty() && w.type.shape.is_static() && w.type.shape.rank() == 2)
      f.lora_width[i] =
          static_cast<double>(w.type.shape.dim(0).value() + w.type.shape.dim(1).value());
  }
}

// The up-projections (weight matmuls of the node's layer, not attention projections) that compute
// `v` through pointwise ops within that layer (the activation, a gate's product): none when `v`
// comes from elsewhere. A normalization ends the walk: what it normalizes is a layer's stream,
// not an MLP's hidden state.
std::vector<NodeId> MlpUpProducers(const Graph& g, const GraphFacts& f, ValueId v,
                                   const std::string& layer) {
  std::vector<NodeId> found;
  std::vector<ValueId> queue{v};
  std::set<ValueId> seen;
  for (std::size_t i = 0; i < queue.size() && i < 64; ++i) {
    if (queue[i] == kNoValue || !seen.insert(queue[i]).second) continue;
    const NodeId id = g.value(queue[i]).producer;
    if (id == kNoNode) continue;
    const auto p = static_cast<std::size_t>(id);
    if (f.layer[p] != layer) continue;
    const Node& n = g.node(id);
    if (n.kind == OpKind::kNormalization) continue;
    if (IsMatrixKind(n.kind)) {
      if (f.weight_matmul[p] && !f.attention_projection[p]) found.push_back(id);
      continue;
    }
    for (ValueId in : n.inputs) {
      if (in != kNoValue && g.value(in).origin != ValueOrigin::kInitializer) queue.push_back(in);
    }
  }
  return found;
}

void MarkMlpProjections(const Graph& g, GraphFacts& f) {
  f.mlp_down.assign(g.nodes().size(), false);
  f.mlp_up.assign(g.nodes().size(), false);
  for (const Node& n : g.nodes()) {
    const auto i = static_cast<std::size_t>(n.id);
    if (!f.weight_matmul[i] || f.attention_projection[i] || f.layer[i].empty()) continue;
    const std::vector<NodeId> ups = MlpUpProducers(g, f, n.input(0), f.layer[i]);
    if (ups.empty()) continue;
    f.mlp_down[i] = true;
    for (NodeId up : ups) f.mlp_up[static_cast<std::size_t>(up)] = true;
  }
}

void CountAttentionKv(const Graph& g, GraphFacts& f) {
  for (const Node& n : g.nodes()) {
    if (n.op != Op::kAttention || n.inputs.size() < 3) continue;
    double elements = 0;
    for (std::size_t i = 1; i <= 2; ++i) {
      if (n.input(i) == kNoValue) continue;
      if (auto e = g.value(n.input(i)).type.shape.NumElements())
        elements += static_cast<double>(*e);
    }
    f.attention_kv_elements += elements;
    f.largest_attention_kv_elements = std::max(f.largest_attention_kv_elements, elements);
    if (!n.outputs.empty() && n.outputs[0] != kNoValue) {
      if (auto e = g.value(n.outputs[0]).type.shape.NumElements())
        f.attention_output_elements += static_cast<double>(*e);
    }
  }
}

}  // namespace

GraphFacts AnalyzeGraph(const Graph& g) {
  GraphFacts f;
  f.attention.assign(g.nodes().size(), false);
  f.implied_batchnorm.assign(g.nodes().size(), false);
  f.depthwise.assign(g.nodes().size(), false);
  f.inside_activation.assign(g.nodes().size(), false);
  f.activation_root.assign(g.nodes().size(), false);
  f.attention_projection.assign(g.nodes().size(), false);
  f.attention_input_projection.assign(g.nodes().size(), false);
  f.expert_matmul.assign(g.nodes().size(), false);
  f.moe_dispatch.assign(g.nodes().size(), false);
  f.layer.reserve(g.nodes().size());
  for (const Node& n : g.nodes()) f.layer.push_back(LayerKey(n.loc.scope));
  // The fused attention and activation kernels are the eager framework's; a compiled XLA
  // program's kernels are XLA's fusions (fusion.cc), whatever ops they contain.
  if (!g.facts().xla_program) {
    MarkAttention(g, f);
    MarkAttentionProjections(g, f);
    MarkActivations(g, f);
  }
  MarkExperts(g, f);
  MarkLoraTargets(g, f);
  MarkMlpProjections(g, f);
  CountAttentionKv(g, f);
  f.channels_minor = ChannelsMinorValues(g);
  const bool has_norm = std::any_of(g.nodes().begin(), g.nodes().end(),
                                    [](const Node& n) { return n.kind == OpKind::kNormalization; });
  for (const Node& n : g.nodes()) {
    if (n.kind != OpKind::kConv || n.inputs.size() < 2) continue;
    const std::size_t i = static_cast<std::size_t>(n.id);
    if (n.conv) {
      // XLA-style: one input feature per group in the kernel's input-feature dim.
      const Shape& w = g.value(n.input(1)).type.shape;
      const auto in_dim = static_cast<std::size_t>(n.conv->kernel_input_feature);
      f.depthwise[i] = n.conv->feature_groups > 1 && in_dim < w.rank() &&
                       w.dim(in_dim).is_static() && w.dim(in_dim).value() == 1;
      f.any_depthwise |= f.depthwise[i];
      continue;
    }
    const Shape& w = g.value(n.input(1)).type.shape;
    const std::int64_t group = n.IntAttr("group").value_or(1);
    f.depthwise[i] = group > 1 && w.rank() >= 2 && w.dim(1).is_static() && w.dim(1).value() == 1;
    f.any_depthwise |= f.depthwise[i];
    // An inference export (torch.onnx in eval mode) folds each BatchNorm into the conv before it:
    // a conv network with no normalization op left had them. Training runs them again.
    f.implied_batchnorm[i] = !has_norm;
    f.any_implied_batchnorm |= !has_norm;
  }
  return f;
}

}  // namespace tpudoctor
