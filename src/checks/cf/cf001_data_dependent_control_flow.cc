// CF001 data-dependent-control-flow: If/Loop whose condition or trip count comes from runtime
// values. XLA lowers both — a conditional whose branches yield the same shapes, a while loop whose
// carried values keep their shapes — so those are notes. A Loop that collects per-iteration scan
// outputs (their length is the runtime trip count), whose carried values change shape, or an If
// whose branches disagree on shapes, has a data-dependent shape: an error. In XLA programs (HLO,
// StableHLO) `while` and `conditional` are what XLA compiles: a note says what they cost.
#include <algorithm>

#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

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
    XlaControlFlow(ctx, sink);
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph& g, const std::string& path, const Node& n) {
          if (!n.control || IsRoot(ctx, g, n)) return;
          const ControlFlow& cf = *n.control;
          if (n.op == Op::kIf && Runtime(ctx, g, n, cf.selector)) sink.Add(FineIf(path, n));
          if (n.op == Op::kLoop && (Runtime(ctx, g, n, cf.trip_count) ||
                                    Runtime(ctx, g, n, cf.condition) || !Input(n, cf.trip_count))) {
            sink.Add(FineLoop(path, n));
          }
        });
  }

 private:
  // XLA programs: `while` and `conditional` are already what XLA compiles, so they run on the
  // TPU. Say so, and what the estimate counts for them: one note per kind.
  void XlaControlFlow(const CheckContext& ctx, DiagnosticSink& sink) const {
    struct Seen {
      std::vector<std::string> names;
      Location first;
    };
    Seen loops, branches;
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph&, const std::string& path, const Node& n) {
          Seen* s = n.op == Op::kWhile ? &loops : n.op == Op::kConditional ? &branches : nullptr;
          if (s == nullptr) return;
          if (s->names.empty()) s->first = LocationOf(path, n);
          s->names.push_back(n.name);
        });
    if (!loops.names.empty()) {
      sink.Add(XlaNote(loops.names, loops.first,
                       "`while` loop runs on the TPU: XLA keeps it on the device, one iteration "
                       "after another, with no host round trip",
                       "the cost estimate counts one iteration of the body; the trip count is a "
                       "runtime value in the program, so multiply by it (a `lax.scan` or "
                       "`fori_loop` with static bounds lets XLA unroll and pipeline it)"));
    }
    if (!branches.names.empty()) {
      sink.Add(XlaNote(branches.names, branches.first,
                       "`conditional` runs on the TPU: the branch index is read on the device and "
                       "only the taken branch runs",
                       "the cost estimate counts the most expensive branch"));
    }
  }

  Diagnostic XlaNote(const std::vector<std::string>& names, const Location& first,
                     const std::string& what, const std::string& cost) const {
    Diagnostic d = NewFinding();
    d.severity = Severity::kNote;
    d.location = first;
    d.message = names.size() == 1 ? what : std::to_string(names.size()) + " ops: " + what;
    d.notes.push_back(cost);
    if (names.size() > 1) {
      std::vector<std::string> shown(names.begin(),
                                     names.begin() + std::min<std::size_t>(names.size(), 8));
      for (std::string& s : shown) s = "`" + s + "`";
      d.notes.push_back("nodes: " + Join(shown, ", ") + (names.size() > 8 ? ", ..." : ""));
    }
    return d;
  }

  // Whether the node has input `i` (an optional input may be left out).
  static bool Input(const Node& n, std::optional<std::size_t> i) {
    return i && n.input(*i) != kNoValue;
  }
  static bool Runtime(const CheckContext& ctx, const Graph& g, const Node& n,
                      std::optional<std::size_t> i) {
    return Input(n, i) && ctx.dynamism.facts(g, n.input(*i)).runtime_data;
  }
  static bool IsRoot(const CheckContext& ctx, const Graph& g, const Node& n) {
    for (const DynamicRoot& r : ctx.dynamism.roots()) {
      if (r.graph == &g && r.node == n.id) return true;
    }
    return false;
  }

  Diagnostic RootError(const DynamicRoot& root) const {
    const Node& n = root.graph->node(root.node);
    Diagnostic d = NewFinding();
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
    Diagnostic d = NewFinding();
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
    Diagnostic d = NewFinding();
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
