// The one list of checks. Keep it sorted by code.
#include <algorithm>

#include "src/checks/factories.h"
#include "src/support/two_threads.h"
#include "tpudoctor/check/check.h"

namespace tpudoctor {

const std::vector<std::unique_ptr<Check>>& AllChecks() {
  static const auto* checks = [] {
    auto* v = new std::vector<std::unique_ptr<Check>>();
    v->push_back(MakeCf001DataDependentControlFlow());
    v->push_back(MakeMem001OverHbm());
    v->push_back(MakeMem002LargeConstant());
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

bool RuleSelected(std::string_view code, const CheckOptions& options) {
  auto matches = [&](const std::vector<std::string>& prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& p) { return code.starts_with(p); });
  };
  if (!options.select.empty() && !matches(options.select)) return false;
  return !matches(options.ignore);
}

CheckContext::CheckContext(const ModelAnalysis& analysis, const CheckOptions& options)
    : graph(analysis.graph()),
      target(analysis.target()),
      dynamism(analysis.dynamism()),
      options(options),
      analysis(analysis),
      estimate(analysis.estimate() ? &*analysis.estimate() : nullptr),
      batch(analysis.batch()),
      slice_chips(analysis.slice_chips()),
      sharded_estimate(analysis.sharded_estimate() ? &*analysis.sharded_estimate() : nullptr) {}

// The checks only read the analysis, so two threads take them in turn. Each check writes to its
// own sink and the sinks are joined in registry order: the findings are those of running the
// checks one after another.
std::vector<Diagnostic> RunChecks(const ModelAnalysis& analysis, const CheckOptions& options) {
  const CheckContext context(analysis, options);
  const auto& checks = AllChecks();
  std::vector<DiagnosticSink> sinks(checks.size());
  RunOnTwoThreads(checks.size(), [&](std::size_t i) {
    if (RuleSelected(checks[i]->code(), options)) checks[i]->Run(context, sinks[i]);
  });
  std::vector<Diagnostic> findings;
  for (DiagnosticSink& sink : sinks) {
    for (Diagnostic& d : sink.Take()) findings.push_back(std::move(d));
  }
  SortDiagnostics(findings);
  return findings;
}

std::vector<Diagnostic> RunChecks(const Graph& graph, const TargetSpec& target,
                                  const CheckOptions& options) {
  return RunChecks(ModelAnalysis(graph, target, options), options);
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

}  // namespace tpudoctor
