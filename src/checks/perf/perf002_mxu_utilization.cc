// PERF002 mxu-utilization: a matmul or convolution whose dims leave most of the TPU's systolic
// array (128x128, 256x256 on v6e/7x) idle, where it matters for the step time.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

constexpr double kMaxUtilization = 0.5;  // useful / padded MXU work below this is worth a warning
constexpr double kMinShare = 0.10;       // of the model's padded matrix work: where it matters

std::int64_t RoundUp(double v, int tile) {
  const auto n = static_cast<std::int64_t>(v);
  return (n + tile - 1) / tile * tile;
}

// Whether `node` is the model's output layer: its result reaches a graph output through at most a
// few bias adds, reshapes, casts and a softmax (a classifier head whose N is the class count).
bool IsOutputLayer(const Graph& g, const Node& node) {
  static const std::set<OpKind> kPassThrough = {OpKind::kElementwise, OpKind::kSoftmax,
                                                OpKind::kLayout, OpKind::kCast};
  std::vector<ValueId> frontier(node.outputs.begin(), node.outputs.end());
  for (int hop = 0; hop < 4 && !frontier.empty(); ++hop) {
    std::vector<ValueId> next;
    for (ValueId v : frontier) {
      if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return true;
      for (NodeId user : g.value(v).users) {
        const Node& u = g.node(user);
        if (!kPassThrough.count(u.kind)) continue;
        next.insert(next.end(), u.outputs.begin(), u.outputs.end());
      }
    }
    frontier = std::move(next);
  }
  return false;
}

// Whether `node`'s first operand is a model input, through at most a few reshapes, casts and
// elementwise ops: its K is then the data's width (784 pixels), not a hidden size.
bool IsInputLayer(const Graph& g, const Node& node) {
  static const std::set<OpKind> kPassThrough = {OpKind::kElementwise, OpKind::kLayout,
                                                OpKind::kCast};
  ValueId v = node.input(0);
  for (int hop = 0; hop < 4 && v != kNoValue; ++hop) {
    const Value& value = g.value(v);
    if (value.origin == ValueOrigin::kGraphInput) return true;
    if (value.producer == kNoNode) return false;
    const Node& p = g.node(value.producer);
    if (!kPassThrough.count(p.kind)) return false;
    v = p.input(0);
  }
  return false;
}

// Whether operand `i` of `node` is a weight: an initializer or constant, through at most a few
// reshapes, transposes and casts.
bool IsWeight(const Graph& g, const Node& node, std::size_t i) {
  ValueId v = node.input(i);
  for (int hop = 0; hop < 4 && v != kNoValue; ++hop) {
    const Value& value = g.value(v);
    if (value.origin == ValueOrigin::kInitializer) return true;
    if (value.producer == kNoNode) return false;
    const Node& p = g.node(value.producer);
    if (p.kind == OpKind::kConstant) return true;
    if (p.kind != OpKind::kLayout && p.kind != OpKind::kCast) return false;
    v = p.input(0);
  }
  return false;
}

// A matmul of two activations (attention's scores and weighted sum): its non-head dims are the
// sequence lengths the data sets (Whisper's 1,500 audio frames), not widths a designer chose.
bool MultipliesActivations(const Graph& g, const Node& node) {
  return node.kind == OpKind::kMatMul && node.inputs.size() >= 2 && !IsWeight(g, node, 0) &&
         !IsWeight(g, node, 1) && g.value(node.input(0)).origin != ValueOrigin::kGraphInput;
}

// Each wasted dim, read for what it is: a width the designer chose freely (a hidden size such as
// 300 that is neither a power of two nor a multiple of 64), or one the model cannot change: the
// task's output count, the input data's width, the batch a weight gradient sums over, a standard
// architecture width (a power of two or a multiple of 64: 64-channel convolutions, head dims of
// 32 or 64). Only the first kind is worth changing; the MXU pads every dim anyway, so padding a
// layer by hand gains nothing.
struct DimReading {
  std::vector<std::string> changeable;  // "K 300 costs as much as 384 (...)"
  std::vector<std::string> fixed;       // "N = 10 is the task's output count"
};

// A power of two (8, 16, 32) or a multiple of 64: the sizes architectures are built from (head
// dims of 32 or 64, 64-channel convolutions), chosen for reasons of their own.
bool StandardWidth(std::int64_t v) { return v % 64 == 0 || (v >= 8 && (v & (v - 1)) == 0); }

DimReading ReadDims(const Graph& g, const Node& n, const MatmulDims& d, int tile,
                    std::int64_t batch) {
  DimReading r;
  const auto N = static_cast<std::int64_t>(d.n), K = static_cast<std::int64_t>(d.k);
  auto width = [&](const char* name, std::int64_t v) {
    const std::int64_t up = RoundUp(static_cast<double>(v), tile);
    const std::int64_t down = up - tile;
    return std::string(name) + " " + std::to_string(v) + " costs as much as " + std::to_string(up) +
           " (widen it to " + std::to_string(up) + " for capacity at the same time" +
           (down > 0 ? ", or narrow it to " + std::to_string(down) + " for speed" : "") + ")";
  };
  const bool activations = MultipliesActivations(g, n);
  auto sequence = [](const char* name, std::int64_t v) {
    return std::string(name) + " = " + std::to_string(v) +
           " is a sequence length (a matmul of two activations, like attention's)";
  };
  if (N % tile != 0) {
    if (activations && !StandardWidth(N)) {
      r.fixed.push_back(sequence("N", N));
    } else if (N < tile && IsOutputLayer(g, n)) {
      r.fixed.push_back("N = " + std::to_string(N) + " is the task's output count");
    } else if (N < 32) {
      r.fixed.push_back("N = " + std::to_string(N) + " is a count the task sets");
    } else if (StandardWidth(N)) {
      r.fixed.push_back("N = " + std::to_string(N) + " is a standard architecture width");
    } else {
      r.changeable.push_back(width("N", N));
    }
  }
  if (K % tile != 0) {
    if (activations && !StandardWidth(K)) {
      r.fixed.push_back(sequence("K", K));
    } else if (IsInputLayer(g, n)) {
      r.fixed.push_back("K = " + std::to_string(K) + " is the input data's width");
    } else if (batch > 0 && K == batch) {
      // A weight gradient (dW = X^T dY) contracts over the batch.
      r.fixed.push_back("K = " + std::to_string(K) + " is the batch (a weight gradient sums over " +
                        "it): a larger per-core batch fills it");
    } else if (StandardWidth(K)) {
      r.fixed.push_back("K = " + std::to_string(K) + " is a standard architecture width");
    } else {
      r.changeable.push_back(width("K", K));
    }
  }
  return r;
}

// What a user can do about it, and only that.
std::string FixFor(const DimReading& r, const MatmulDims& d, int tile) {
  std::vector<std::string> parts;
  if (!r.changeable.empty()) {
    parts.push_back("the MXU pads every dim to a multiple of " + std::to_string(tile) + ": " +
                    Join(r.changeable, "; "));
  }
  if (!r.fixed.empty()) {
    parts.push_back(Join(r.fixed, ", ") +
                    ": nothing to change there (padding a layer by hand would not make it faster)");
  }
  if (d.m < 8) parts.push_back("a larger batch fills the rows");
  return Join(parts, "; ");
}

class Perf002MxuUtilization final : public Check {
 public:
  std::string_view code() const override { return "PERF002"; }
  std::string_view name() const override { return "mxu-utilization"; }
  std::string_view summary() const override {
    return "a matmul/conv uses a small share of the MXU because its dims are not multiples of its "
           "size";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    if (!ctx.target.is_tpu() || !ctx.target.mxu_dim || ctx.estimate == nullptr) return;
    const int tile = *ctx.target.mxu_dim;
    const std::vector<OpCost>& costs = ctx.analysis.op_costs();
    auto padded = [&](const MatmulDims& d) { return PaddedFlops(d, ctx.target); };
    double total = 0;
    for (const OpCost& c : costs) {
      if (c.matmul) total += padded(*c.matmul);
    }
    // Layers of the same (N, K) waste the MXU the same way: one finding per shape, largest first.
    struct Group {
      const Node* first = nullptr;
      MatmulDims dims;
      double utilization = 1;
      double share = 0;
      int count = 0;
    };
    std::map<std::pair<double, double>, Group> groups;
    for (NodeId id : ctx.graph.topo_order()) {
      const OpCost& c = costs[static_cast<std::size_t>(id)];
      if (!c.matmul || total <= 0) continue;
      const double p = padded(*c.matmul);
      const double utilization = c.flops / p;
      if (utilization >= kMaxUtilization) continue;
      // A layer smaller than one MXU tile in every dim is below the array's granularity: no nearby
      // size helps, so it is not worth a warning.
      if (std::max(c.matmul->n, c.matmul->k) < tile) continue;
      Group& g = groups[{c.matmul->n, c.matmul->k}];
      if (g.first == nullptr) {
        g.first = &ctx.graph.node(id);
        g.dims = *c.matmul;
        g.utilization = utilization;
      }
      g.share += p / total;
      ++g.count;
    }
    std::vector<Group> ordered;
    for (auto& [key, g] : groups) {
      if (g.share >= kMinShare) ordered.push_back(g);
    }
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const Group& a, const Group& b) { return a.share > b.share; });
    constexpr std::size_t kMaxFindings = 5;
    for (std::size_t i = 0; i < ordered.size() && i < kMaxFindings; ++i) {
      const Group& g = ordered[i];
      const Node& n = *g.first;
      const MatmulDims& d = g.dims;
      Diagnostic diag;
      diag.code = std::string(code());
      const DimReading reading = ReadDims(ctx.graph, n, d, tile, ctx.batch);
      // Only a width the designer can change makes it a warning; the rest is worth knowing.
      diag.severity = reading.changeable.empty() ? Severity::kNote : Severity::kWarning;
      diag.message = "`" + n.QualifiedOp() + "` uses " + FormatFixed(g.utilization * 100, 0) +
                     "% of the " + std::to_string(tile) + "x" + std::to_string(tile) +
                     " MXU: M=" + FormatFixed(d.m, 0) + ", N=" + FormatFixed(d.n, 0) +
                     ", K=" + FormatFixed(d.k, 0) + " are padded to multiples of 8, " +
                     std::to_string(tile) + " and " + std::to_string(tile);
      diag.location = LocationOf(ctx.graph.name(), n);
      diag.notes.push_back(
          (g.count > 1 ? Plural(g.count, "op", "ops") + " of this shape are " : "this op is ") +
          FormatFixed(g.share * 100, 1) + "% of the model's padded matrix work");
      diag.fix = Fix{FixFor(reading, d, tile), FixApplicability::kDisplayOnly};
      sink.Add(std::move(diag));
    }
    if (ordered.size() > kMaxFindings) {
      Diagnostic more;
      more.code = std::string(code());
      more.severity = Severity::kNote;
      more.message = Plural(static_cast<std::int64_t>(ordered.size() - kMaxFindings),
                            "more layer shape", "more layer shapes") +
                     " under-use the MXU (smaller shares of the work)";
      more.location.graph = ctx.graph.name();
      sink.Add(std::move(more));
    }
  }
};

}  // namespace

std::unique_ptr<Check> MakePerf002MxuUtilization() {
  return std::make_unique<Perf002MxuUtilization>();
}

}  // namespace tpudoctor
