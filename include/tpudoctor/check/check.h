// Check: one rule, one code, one file. A check is stateless: Run() reads the graph (and shared
// analyses) through a CheckContext and adds Diagnostics to a sink. Checks never print, never
// throw, and never modify the graph.
//
// All checks are listed in one sorted registry (src/checks/registry.cc, AllChecks()); there is no
// static self-registration. Every registered code has docs/rules/CODE.md and a fixture directory
// testdata/rules/CODE/, which a test enforces.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/analysis/model_analysis.h"
#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/ir/graph.h"
#include "tpudoctor/ir/graph_walk.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

// What the memory and performance rules assume about the run (flags of `check`), and which rules
// run.
struct CheckOptions : StepAssumptions {
  // Rule codes or code prefixes (`PERF`, `TPU003`): only selected rules run (all when empty), and
  // ignored ones never do.
  std::vector<std::string> select;
  std::vector<std::string> ignore;
};

// Whether the options let the rule with this code run (LOAD findings are filtered the same way).
bool RuleSelected(std::string_view code, const CheckOptions& options);

// What a check reads: the analysis of the model on the target (model_analysis.h), spelled out.
struct CheckContext {
  explicit CheckContext(const ModelAnalysis& analysis, const CheckOptions& options);
  const Graph& graph;
  const TargetSpec& target;
  const Dynamism& dynamism;
  const CheckOptions& options;
  const ModelAnalysis& analysis;  // everything below, and op costs on demand
  // The cost estimate at the graph's shapes; null when the inputs are not static (the memory and
  // performance rules then stay silent: SHP002 says how to make them static).
  const Estimate* estimate = nullptr;
  std::int64_t batch = 0;  // the model's per-device batch (ModelFacts::batch), 0 when unknown
  int slice_chips = 1;     // chips of the slice the target names (`v6e-8`: 8)
  // The step sharded over the slice when it does not fit one chip (ModelAnalysis).
  const Estimate* sharded_estimate = nullptr;
};

class Check {
 public:
  virtual ~Check() = default;
  virtual std::string_view code() const = 0;     // "TPU001"
  virtual std::string_view name() const = 0;     // kebab-case: "unsupported-dtype"
  virtual std::string_view summary() const = 0;  // one line for `tpu-doctor rules`
  virtual void Run(const CheckContext& context, DiagnosticSink& sink) const = 0;

 protected:
  // A finding of this rule: its code set; severity, message, location and fix are the caller's.
  Diagnostic NewFinding() const {
    Diagnostic d;
    d.code = std::string(code());
    return d;
  }
};

// Every check, sorted by code.
const std::vector<std::unique_ptr<Check>>& AllChecks();

// Runs every selected check on an analysis; diagnostics come back in a deterministic order
// (SortDiagnostics).
std::vector<Diagnostic> RunChecks(const ModelAnalysis& analysis, const CheckOptions& options = {});
// The same after analysing `graph` on `target` under the options' step assumptions.
std::vector<Diagnostic> RunChecks(const Graph& graph, const TargetSpec& target,
                                  const CheckOptions& options = {});

// Helpers shared by checks (GraphPath and ForEachNodeWithPath: ir/graph_walk.h).
Location LocationOf(const std::string& graph_path, const Node& node);

}  // namespace tpudoctor
