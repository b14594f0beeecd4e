#include "tpudoctor/cost/fusion.h"

#include <algorithm>
#include <map>
#include <set>

namespace tpudoctor {
namespace {

// A `call` whose body is only pointwise and layout work is inlined and fused like its contents.
bool CallIsPointwise(const Node& n) {
  if (n.op != Op::kCall || n.subgraphs.empty()) return false;
  const Graph& body = *n.subgraphs.front().graph;
  const std::vector<OpCost> costs = ComputeOpCosts(body);
  for (const Node& inner : body.nodes()) {
    const FusionRole r = RoleOf(inner, costs[static_cast<std::size_t>(inner.id)]);
    if (r != FusionRole::kFree && r != FusionRole::kFusible) return false;
  }
  return true;
}

// A producer cheap enough to recompute in each kernel that reads it.
bool IsCheap(const Node& n) {
  if (n.kind == OpKind::kCast || n.kind == OpKind::kLayout) return true;
  return n.kind == OpKind::kElementwise && !n.traits.expensive;
}

// Whether a kernel rooted at a node of `kind` takes producer `p` into itself.
bool Accepts(FusionRole kind, const Node& p) {
  switch (kind) {
    case FusionRole::kFusible:
    case FusionRole::kReduction:
      return true;
    case FusionRole::kMatrix:  // operand fusion: conversions and layout changes only
      return p.kind == OpKind::kCast || p.kind == OpKind::kLayout;
    default:
      return false;
  }
}

class Planner {
 public:
  Planner(const Graph& g, const std::vector<OpCost>& costs, const FusionOptions& options)
      : g_(g), costs_(costs), options_(options) {
    const std::size_t n = g.nodes().size();
    role_.resize(n);
    groups_of_.resize(n);
    member_of_.assign(n, -1);
    user_mark_.assign(n, 0);
    returned_.assign(g.values().size(), false);
    for (const Node& node : g.nodes())
      role_[static_cast<std::size_t>(node.id)] = RoleOf(node, Cost(node.id));
    for (ValueId v : g.outputs()) returned_[static_cast<std::size_t>(v)] = true;
  }

  FusionPlan Run() {
    const auto& topo = g_.topo_order();
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) Place(*it);
    if (options_.epilogue) FuseEpilogues();
    return Finish();
  }

 private:
  const OpCost& Cost(NodeId id) const { return costs_[static_cast<std::size_t>(id)]; }
  FusionRole Role(NodeId id) const { return role_[static_cast<std::size_t>(id)]; }
  int MemberOf(NodeId id) const { return member_of_[static_cast<std::size_t>(id)]; }

  // A free node whose result is its input's data relabelled (a reshape, a tuple element), as
  // opposed to free work that reads no data (a shape, compile-time arithmetic, a constant).
  bool IsAlias(NodeId id) const {
    const Node& n = g_.node(id);
    return Role(id) == FusionRole::kFree && (n.traits.view || n.kind == OpKind::kLayout);
  }

  // The non-view nodes that read `v`, looking through views; `escapes` when a view of it (or it)
  // is a program output.
  void RealUsers(ValueId v, std::vector<NodeId>& users, bool& escapes) const {
    ++epoch_;  // a node is added once per call: marked with this call's epoch
    CollectUsers(v, users, escapes, 0);
  }
  void CollectUsers(ValueId v, std::vector<NodeId>& users, bool& escapes, int depth) const {
    if (returned_[static_cast<std::size_t>(v)]) escapes = true;
    if (depth > 64) return;
    for (NodeId u : g_.value(v).users) {
      if (Role(u) != FusionRole::kFree) {
        auto& mark = user_mark_[static_cast<std::size_t>(u)];
        if (mark != epoch_) users.push_back(u);
        mark = epoch_;
      } else if (IsAlias(u)) {
        for (ValueId o : g_.node(u).outputs) CollectUsers(o, users, escapes, depth + 1);
      }
    }
  }

  // Recomputing a producer in k kernels reads its inputs k times; materializing it writes its
  // result once and reads it k times. XLA duplicates when that does not cost more traffic (a
  // broadcast, a widening convert, a unary op), not a residual add of two activations.
  bool DuplicationPays(const Node& n, std::size_t k) const {
    std::set<ValueId> inputs;
    for (ValueId in : n.inputs) {
      if (in != kNoValue) inputs.insert(Source(in));
    }
    double in_bytes = 0, out_bytes = 0;
    for (ValueId v : inputs) in_bytes += Bytes(v);
    for (ValueId v : n.outputs) out_bytes += Bytes(v);
    return static_cast<double>(k) * in_bytes <= static_cast<double>(k + 1) * out_bytes;
  }

  int NewKernel(NodeId root) {
    FusionKernel k;
    k.root = root;
    k.kind = Role(root) == FusionRole::kFusible ? FusionRole::kFusible : Role(root);
    k.nodes.push_back(root);
    kernels_.push_back(std::move(k));
    return static_cast<int>(kernels_.size()) - 1;
  }

  // Consumers are placed before their producers (reverse topological order), so a producer sees
  // the kernels of all its users.
  void Place(NodeId id) {
    const FusionRole role = Role(id);
    if (role == FusionRole::kFree) return;
    const Node& n = g_.node(id);
    std::vector<NodeId> users;
    bool escapes = false;
    for (ValueId o : n.outputs) RealUsers(o, users, escapes);
    if (users.empty() && !escapes && role != FusionRole::kOpaque) return;  // dead code
    auto& mine = groups_of_[static_cast<std::size_t>(id)];
    if (role == FusionRole::kFusible && !users.empty()) {
      std::set<int> user_kernels;
      for (NodeId u : users) {
        const auto& gs = groups_of_[static_cast<std::size_t>(u)];
        if (gs.empty()) user_kernels.insert(-1);  // a user with no kernel (cannot happen, safe)
        user_kernels.insert(gs.begin(), gs.end());
      }
      const bool all_accept =
          !user_kernels.contains(-1) &&
          std::ranges::all_of(user_kernels, [&](int k) { return Accepts(kernels_[k].kind, n); });
      if (all_accept && user_kernels.size() == 1) {
        const int k = *user_kernels.begin();
        kernels_[static_cast<std::size_t>(k)].nodes.push_back(id);
        mine.push_back(k);
        member_of_[static_cast<std::size_t>(id)] = k;
        return;
      }
      if (all_accept && !escapes && IsCheap(n) && DuplicationPays(n, user_kernels.size())) {
        for (int k : user_kernels) kernels_[static_cast<std::size_t>(k)].duplicated.push_back(id);
        mine.assign(user_kernels.begin(), user_kernels.end());
        return;
      }
    }
    const int k = NewKernel(id);
    mine.push_back(k);
    member_of_[static_cast<std::size_t>(id)] = k;
  }

  // A matmul/conv kernel takes the pointwise kernel that alone reads its result (bias, activation).
  void FuseEpilogues() {
    for (std::size_t m = 0; m < kernels_.size(); ++m) {
      FusionKernel& mk = kernels_[m];
      if (mk.kind != FusionRole::kMatrix || mk.nodes.empty()) continue;
      std::vector<NodeId> users;
      bool escapes = false;
      for (ValueId o : g_.node(mk.root).outputs) RealUsers(o, users, escapes);
      if (escapes || users.empty()) continue;
      const int l = MemberOf(users.front());
      if (l < 0 || static_cast<std::size_t>(l) == m || kernels_[l].kind != FusionRole::kFusible)
        continue;
      if (!std::ranges::all_of(users, [&](NodeId u) { return MemberOf(u) == l; })) continue;
      FusionKernel& lk = kernels_[static_cast<std::size_t>(l)];
      if (options_.train &&
          std::ranges::any_of(lk.nodes, [&](NodeId x) { return g_.node(x).op == Op::kBatchNorm; }))
        continue;
      for (NodeId x : lk.nodes) member_of_[static_cast<std::size_t>(x)] = static_cast<int>(m);
      mk.nodes.insert(mk.nodes.end(), lk.nodes.begin(), lk.nodes.end());
      mk.duplicated.insert(mk.duplicated.end(), lk.duplicated.begin(), lk.duplicated.end());
      mk.root = lk.root;
      lk.nodes.clear();
      lk.duplicated.clear();
    }
  }

  double Bytes(ValueId v) const {
    return TensorBytes(g_.value(v).type, options_.element_bytes).value_or(0);
  }

  // The value a kernel really reads for `v`: views are looked through to what they view.
  ValueId Source(ValueId v) const {
    for (int depth = 0; depth < 64; ++depth) {
      const NodeId p = g_.value(v).producer;
      if (p == kNoNode || !IsAlias(p)) return v;
      const Node& pn = g_.node(p);
      if (pn.inputs.size() != 1 || pn.input(0) == kNoValue) return v;
      v = pn.input(0);
    }
    return v;
  }

  void Account(FusionKernel& k) const {
    std::set<NodeId> inside(k.nodes.begin(), k.nodes.end());
    inside.insert(k.duplicated.begin(), k.duplicated.end());
    std::set<ValueId> read;
    // A gather reads the rows it takes from its table, not the table: what the kernel's gathers
    // write of each table it reads only through them.
    std::map<ValueId, double> gathered;
    for (NodeId id : inside) {
      const OpCost& c = Cost(id);
      k.known = k.known && c.known;
      if (Role(id) == FusionRole::kMatrix) {
        k.matrix_flops += c.flops;
        if (c.matmul &&
            (!k.matmul || c.flops > k.matmul->batch * k.matmul->m * k.matmul->n * k.matmul->k * 2))
          k.matmul = c.matmul;
      }
      const Node& node = g_.node(id);
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        const ValueId in = node.inputs[i];
        if (in == kNoValue) continue;
        const ValueId src = Source(in);
        const NodeId p = g_.value(src).producer;
        if (p != kNoNode && inside.contains(p)) continue;
        if (i == 0 && node.kind == OpKind::kGather && !node.outputs.empty()) {
          gathered[src] += Bytes(node.outputs.front());
          continue;
        }
        read.insert(src);
      }
    }
    for (ValueId v : read) k.bytes_in += Bytes(v);
    for (const auto& [v, rows] : gathered) {
      if (!read.contains(v)) k.bytes_in += std::min(rows, Bytes(v));
    }
    for (NodeId id : k.nodes) {
      for (ValueId o : g_.node(id).outputs) {
        std::vector<NodeId> users;
        bool escapes = false;
        RealUsers(o, users, escapes);
        const bool leaves =
            escapes || std::ranges::any_of(users, [&](NodeId u) { return !inside.contains(u); });
        if (!leaves) continue;
        k.bytes_out += Bytes(o);
        k.written.push_back(o);
      }
    }
  }

  FusionPlan Finish() {
    FusionPlan plan;
    plan.kernel_of.assign(g_.nodes().size(), -1);
    for (FusionKernel& k : kernels_) {
      if (k.nodes.empty()) continue;
      Account(k);
      const int index = static_cast<int>(plan.kernels.size());
      for (NodeId id : k.nodes) plan.kernel_of[static_cast<std::size_t>(id)] = index;
      plan.kernels.push_back(std::move(k));
    }
    return plan;
  }

  const Graph& g_;
  const std::vector<OpCost>& costs_;
  const FusionOptions& options_;
  std::vector<FusionRole> role_;
  std::vector<std::vector<int>> groups_of_;  // kernels a node is in (several when duplicated)
  std::vector<int> member_of_;               // per NodeId: the kernel it is a member of, or -1
  std::vector<bool> returned_;               // per ValueId: a program output
  std::vector<FusionKernel> kernels_;
  // RealUsers' marks: a node is in the current call's list when its mark is the call's epoch.
  mutable std::vector<std::uint32_t> user_mark_;
  mutable std::uint32_t epoch_ = 0;
};

}  // namespace

FusionRole RoleOf(const Node& node, const OpCost& cost) {
  // Compile-time work (op_cost.h: shape arithmetic, folded scalars) runs no kernel.
  if (cost.known && cost.cls == CostClass::kFree && node.kind != OpKind::kControlFlow)
    return FusionRole::kFree;
  // A BatchNorm is an affine map per channel once its statistics are known: XLA expands it
  // (BatchNormExpander) into a reduction of its input and pointwise ops that fuse with their
  // neighbours, as the estimate costs it (a training step's statistics pass in time.cc).
  if (node.op == Op::kBatchNorm) return FusionRole::kFusible;
  switch (node.kind) {
    case OpKind::kElementwise:
    case OpKind::kCast:
    case OpKind::kGather:
    case OpKind::kResize:
      return FusionRole::kFusible;
    case OpKind::kLayout:
      return node.traits.view || (cost.known && cost.cls == CostClass::kFree)
                 ? FusionRole::kFree
                 : FusionRole::kFusible;
    case OpKind::kReduce:
    case OpKind::kSoftmax:
    case OpKind::kNormalization:
    case OpKind::kPool:
    case OpKind::kScatter:
      return FusionRole::kReduction;
    case OpKind::kMatMul:
    case OpKind::kConv:
    case OpKind::kConvTranspose:
      return FusionRole::kMatrix;
    case OpKind::kConstant:
    case OpKind::kShapeOf:
      return FusionRole::kFree;
    case OpKind::kControlFlow:
      return CallIsPointwise(node) ? FusionRole::kFusible : FusionRole::kOpaque;
    default:
      return cost.known && cost.cls == CostClass::kFree ? FusionRole::kFree : FusionRole::kOpaque;
  }
}

FusionPlan PlanFusions(const Graph& graph, const std::vector<OpCost>& costs,
                       const FusionOptions& options) {
  return Planner(graph, costs, options).Run();
}

}  // namespace tpudoctor
