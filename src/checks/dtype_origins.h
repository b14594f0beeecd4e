// Where a dtype enters a graph: the root causes that the dtype rules report, instead of every
// value downstream. Private to src/checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/ir/graph.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

struct DTypeOrigin {
  enum class Kind { kInput, kWeights, kNode };
  Kind kind = Kind::kNode;
  std::string graph_path;
  const Graph* graph = nullptr;  // the graph (or subgraph) the origin is in
  const Node* node = nullptr;    // kNode
  const Value* value = nullptr;  // kInput; the first weight for kWeights; the output for kNode
  int weight_count = 0;          // kWeights
};

struct DTypeUse {
  std::vector<DTypeOrigin> origins;
  int values = 0;  // every value of the dtype, origins and knock-ons
};

// Origins of `dtype` in `graph` and its subgraphs: graph inputs of that dtype, the initializers of
// that dtype (one entry per graph), and nodes that output it while none of their inputs has it.
DTypeUse FindDTypeOrigins(const Graph& graph, DType dtype);

// Whether a node origin's values of its dtype never leave a comparison: it widens a narrower value
// or is a constant, and every use (through reshapes and broadcasts) is a comparison that yields
// booleans or a cast back down. `x > -inf` on a float32 `x` traced with float64 literals is one:
// the booleans are the same as in float32, and no wide tensor reaches the rest of the program.
bool ConfinedToComparisons(const DTypeOrigin& origin);

// Whether a node origin is a constant whose every use (through reshapes and broadcasts) converts
// it to a narrower type: a literal such as JAX's `1.0` traced with x64 and cast to float32 at once.
// XLA folds the conversion at compile time, so no tensor of the wide type exists on the device.
bool FoldedLiteral(const DTypeOrigin& origin);

// "float64 also enters at `b`, weight `w`, ... (N places<tail>)": the origins after the first,
// for findings that report one origin per dtype. Empty when there is only one.
std::string OtherOriginsNote(const DTypeUse& use, DType dtype, std::string_view tail = "");

// "float64 input", "Cast to float64", ... with the framework-level cause when it can be inferred.
std::string LikelyCause(const DTypeOrigin& origin, DType dtype,
                        Framework framework = Framework::kUnknown);

// The finding for one origin: "input `x` is float64, which tpu-v5e <verdict>", located at the
// origin, with the likely cause, the target's reason and the count of values of that dtype.
Diagnostic OriginFinding(std::string_view code, Severity severity, const DTypeOrigin& origin,
                         DType dtype, const DTypeRule& rule, const DTypeUse& use,
                         const std::string& target_name, std::string_view verdict,
                         Framework framework = Framework::kUnknown);

}  // namespace tpudoctor
