// The one list of checks. Keep it sorted by code.
#include <algorithm>

#include "src/checks/factories.h"
#include "tpudoctor/check/check.h"

namespace tpudoctor {

const std::vector<std::unique_ptr<Check>>& AllChecks() {
  static const auto* checks = [] {
    auto* v = new std::vector<std::unique_ptr<Check>>();
    v->push_back(MakeCf001DataDependentControlFlow());
    v->push_back(MakeMem001OverHbm());
    v->push_back(MakePerf001TilePadding());
    v->push_back(MakePerf002MxuUtilization());
    v->push_back(MakePerf003BatchMultiple());
    v->push_back(MakePipe001PythonInPipeline());
    v->push_back(MakePipe002SequentialMap());
    v->push_back(MakePipe003NoPrefetch());
    v->push_back(MakePipe004PartialBatch());
    v->push_back(MakePipe005SequentialInterleave());
    v->push_back(MakePipe006SmallShuffle());
    v->push_back(MakePipe007DataOutsideGcs());
    v->push_back(MakeShp001DataDependentShape());
    v->push_back(MakeShp002SymbolicDims());
    v->push_back(MakeTpu001UnsupportedDtype());
    v->push_back(MakeTpu002SlowDtype());
    v->push_back(MakeTpu003UnsupportedOp());
    v->push_back(MakeXla001PlatformCustomCall());
    v->push_back(MakeXla002HostTransfer());
    v->push_back(MakeXla003DynamicDims());
    return v;
  }();
  return *checks;
}

namespace {

bool StaticInputs(const Graph& graph) {
  for (ValueId id : graph.inputs()) {
    if (!graph.value(id).type.shape.is_static()) return false;
  }
  return !graph.inputs().empty();
}

}  // namespace

std::vector<Diagnostic> RunChecks(const Graph& graph, const TargetSpec& target,
                                  const CheckOptions& options) {
  Dynamism dynamism(graph);
  CheckContext context{graph, target, dynamism, options};
  std::optional<Estimate> estimate;
  if (StaticInputs(graph) && dynamism.roots().empty()) {
    const Shape& first = graph.value(graph.inputs()[0]).type.shape;
    // An XLA program's first parameter is often the weights: it has no batch to read off.
    const bool xla = std::any_of(graph.nodes().begin(), graph.nodes().end(), [](const Node& n) {
      return n.domain == "hlo" || n.domain == "stablehlo";
    });
    context.batch = xla ? 0 : first.rank() > 0 ? first.dim(0).value() : 1;
    EstimateOptions eo;
    eo.train = options.train;
    eo.optimizer = options.optimizer;
    eo.precision = options.precision;
    eo.batch = std::max<std::int64_t>(1, context.batch);
    if (auto e = EstimateStep(graph, target, eo)) {
      estimate = std::move(*e);
      context.estimate = &*estimate;
    }
  }
  DiagnosticSink sink;
  for (const auto& check : AllChecks()) check->Run(context, sink);
  std::vector<Diagnostic> out = sink.Take();
  SortDiagnostics(out);
  return out;
}

void SortDiagnostics(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     return a.code < b.code;
                   });
}

Location LocationOf(const std::string& graph_path, const Node& node) {
  Location loc;
  loc.graph = graph_path;
  loc.node = node.name;
  loc.op = node.QualifiedOp();
  loc.scope = node.loc.scope;
  loc.file = node.loc.file;
  loc.line = node.loc.line;
  return loc;
}

std::string GraphPath(const std::string& parent_path, const Node& node, const Subgraph& sub) {
  return parent_path + "/" + node.name + "." + sub.attr_name;
}

}  // namespace tpudoctor
