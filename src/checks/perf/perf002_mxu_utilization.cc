// PERF002 mxu-utilization: a matmul or convolution whose dims leave most of the TPU's systolic
// array (128x128, 256x256 on v6e/7x) idle, where it matters for the step time.
#include <algorithm>
#include <cmath>
#include <map>

#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

constexpr double kMaxUtilization = 0.5;  // useful / padded MXU work below this is worth a warning
constexpr double kMinShare = 0.10;       // of the model's padded matrix work: where it matters

std::string Better(double v, int tile) {
  const auto n = static_cast<std::int64_t>(v);
  if (n % tile == 0) return std::to_string(n);
  const std::int64_t up = (n / tile + 1) * tile;
  const std::int64_t down = n / tile * tile;
  return std::to_string(n) + " -> " + (down > 0 ? std::to_string(down) + " or " : "") +
         std::to_string(up);
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
    const std::vector<OpCost> costs = ComputeOpCosts(ctx.graph);
    auto padded = [&](const MatmulDims& d) {
      auto up = [](double v, double m) { return std::ceil(v / m) * m; };
      return 2 * d.batch * up(d.m, 8) * up(d.n, tile) * up(d.k, tile);
    };
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
      diag.severity = Severity::kWarning;
      diag.message = "`" + n.QualifiedOp() + "` uses " + FormatFixed(g.utilization * 100, 0) +
                     "% of the " + std::to_string(tile) + "x" + std::to_string(tile) +
                     " MXU: M=" + FormatFixed(d.m, 0) + ", N=" + FormatFixed(d.n, 0) +
                     ", K=" + FormatFixed(d.k, 0) + " are padded to multiples of 8, " +
                     std::to_string(tile) + " and " + std::to_string(tile);
      diag.location = LocationOf(ctx.graph.name(), n);
      diag.notes.push_back(
          (g.count > 1 ? Plural(g.count, "op", "ops") + " of this shape are " : "this op is ") +
          FormatFixed(g.share * 100, 1) + "% of the model's padded matrix work");
      diag.fix = Fix{"use sizes that are multiples of " + std::to_string(tile) + ": N " +
                         Better(d.n, tile) + ", K " + Better(d.k, tile) +
                         (d.m < 8 ? "; a larger batch fills the rows" : ""),
                     FixApplicability::kDisplayOnly};
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
