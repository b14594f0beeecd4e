// CF001 data-dependent-control-flow: If/Loop whose condition or trip count comes from runtime
// values. XLA lowers both — a conditional whose branches yield the same shapes, a while loop whose
// carried values keep their shapes — so those are notes. A Loop that collects per-iteration scan
// outputs (their length is the runtime trip count), whose carried values change shape, or an If
// whose branches disagree on shapes, has a data-dependent shape: an error.
#include "src/checks/factories.h"

namespace tpudoctor {
namespace {

class Cf001DataDependentControlFlow final : public Check {
 public:
  std::string_view code() const override { return "CF001"; }
  std::string_view name() const override { return "data-dependent-control-flow"; }
  std::string_view summary() const override {
    return "If/Loop driven by runtime values: fine when shapes stay static, an error when they do "
           "not";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    for (const DynamicRoot& root : ctx.dynamism.roots()) {
      if (root.kind != RootKind::kDynamicLoop && root.kind != RootKind::kDivergentIf) continue;
      sink.Add(RootError(root));
    }
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph& g, const std::string& path, const Node& n) {
          if (!(n.domain.empty() || n.domain == "ai.onnx")) return;
          if (IsRoot(ctx, g, n)) return;
          if (n.op_type == "If" && Runtime(ctx, g, n, 0)) sink.Add(FineIf(path, n));
          if (n.op_type == "Loop" &&
              (Runtime(ctx, g, n, 0) || Runtime(ctx, g, n, 1) || n.input(0) == kNoValue)) {
            sink.Add(FineLoop(path, n));
          }
        });
  }

 private:
  static bool Runtime(const CheckContext& ctx, const Graph& g, const Node& n, std::size_t i) {
    ValueId v = n.input(i);
    return v != kNoValue && ctx.dynamism.facts(g, v).runtime_data;
  }
  static bool IsRoot(const CheckContext& ctx, const Graph& g, const Node& n) {
    for (const DynamicRoot& r : ctx.dynamism.roots()) {
      if (r.graph == &g && r.node == n.id) return true;
    }
    return false;
  }

  Diagnostic RootError(const DynamicRoot& root) const {
    const Node& n = root.graph->node(root.node);
    Diagnostic d;
    d.code = std::string(code());
    d.severity = Severity::kError;
    d.location = LocationOf(root.graph_path, n);
    if (root.kind == RootKind::kDivergentIf) {
      d.message =
          "`If` branches yield different shapes and the condition is a runtime value, so the "
          "output shape depends on data";
      d.fix = Fix{
          "make both branches return the same shapes (pad the smaller one), or compute both and "
          "select with `Where`",
          FixApplicability::kDisplayOnly};
    } else {
      d.message = "`Loop` runs a data-dependent number of iterations and its " + root.detail +
                  " grow with it, so their shapes depend on data";
      d.fix =
          Fix{"give the loop a static trip count (iterate to a fixed maximum and mask the extra "
              "steps), or write into a preallocated fixed-size buffer instead of collecting scan "
              "outputs",
              FixApplicability::kDisplayOnly};
    }
    if (root.downstream > 0) {
      d.notes.push_back(std::to_string(root.downstream) +
                        " values downstream get a data-dependent shape from it");
    }
    return d;
  }

  Diagnostic FineIf(const std::string& path, const Node& n) const {
    Diagnostic d;
    d.code = std::string(code());
    d.severity = Severity::kNote;
    d.location = LocationOf(path, n);
    d.message =
        "`If` branches on a runtime value; XLA lowers it to a conditional because both branches "
        "yield the same shapes";
    d.notes.push_back(
        "only the taken branch runs on the TPU; the condition is read on the device, with no "
        "host round trip (XLA `conditional`)");
    return d;
  }

  Diagnostic FineLoop(const std::string& path, const Node& n) const {
    Diagnostic d;
    d.code = std::string(code());
    d.severity = Severity::kNote;
    d.location = LocationOf(path, n);
    d.message =
        "`Loop` has a runtime trip count; XLA lowers it to a while loop because the loop-carried "
        "values keep their shapes";
    d.notes.push_back(
        "a while loop cannot be unrolled or pipelined across iterations; a static trip count "
        "lets XLA optimise it better");
    return d;
  }
};

}  // namespace

std::unique_ptr<Check> MakeCf001DataDependentControlFlow() {
  return std::make_unique<Cf001DataDependentControlFlow>();
}

}  // namespace tpudoctor
