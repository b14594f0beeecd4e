#include "src/checks/dtype_origins.h"

#include <algorithm>

#include "tpudoctor/check/check.h"
#include "tpudoctor/knowledge/keras_layers.h"
#include "tpudoctor/knowledge/op_support.h"
#include "tpudoctor/knowledge/tf_ops.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

bool HostSide(const Node& n) { return RunsOnHost(n); }

// Nodes that hand a string on unchanged (TF's Identity around asset paths and messages).
bool PassThrough(const Node& n) { return n.op == Op::kIdentity; }

// A string that only host ops make and read (a tf.Example parsed before the model, an assert's
// message, a checkpoint path) never enters the device computation.
bool StaysOnHost(const Graph& g, const Value& v, int depth = 0) {
  if (v.type.dtype != DType::kString || depth > 8) return false;
  if (v.producer != kNoNode && !HostSide(g.node(v.producer)) && !PassThrough(g.node(v.producer)))
    return false;
  for (NodeId user : v.users) {
    const Node& n = g.node(user);
    if (HostSide(n)) continue;
    if (!PassThrough(n)) return false;
    for (ValueId out : n.outputs) {
      if (!StaysOnHost(g, g.value(out), depth + 1)) return false;
    }
  }
  return v.producer != kNoNode || !v.users.empty();
}

void Collect(const Graph& g, const std::string& path, DType dtype, DTypeUse& use) {
  DTypeOrigin weights{DTypeOrigin::Kind::kWeights, path, &g, nullptr, nullptr, 0};
  for (const Value& v : g.values()) {
    if (v.type.dtype != dtype || StaysOnHost(g, v)) continue;
    ++use.values;
    if (v.origin == ValueOrigin::kGraphInput && path.find('/') == std::string::npos) {
      use.origins.push_back({DTypeOrigin::Kind::kInput, path, &g, nullptr, &v, 0});
    }
    if (v.origin == ValueOrigin::kInitializer) {
      if (weights.value == nullptr) weights.value = &v;
      ++weights.weight_count;
    }
  }
  if (weights.weight_count > 0) use.origins.push_back(weights);
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    bool input_has = false;
    for (ValueId in : n.inputs) input_has |= in != kNoValue && g.value(in).type.dtype == dtype;
    for (ValueId out : n.outputs) {
      if (!input_has && g.value(out).type.dtype == dtype && !StaysOnHost(g, g.value(out))) {
        use.origins.push_back({DTypeOrigin::Kind::kNode, path, &g, &n, &g.value(out), 0});
        break;
      }
    }
    for (const Subgraph& sub : n.subgraphs)
      Collect(*sub.graph, GraphPath(path, n, sub), dtype, use);
  }
}

bool YieldsOnlyBooleans(const Graph& g, const Node& n) {
  if (n.kind != OpKind::kElementwise || n.outputs.empty()) return false;
  for (ValueId out : n.outputs) {
    if (g.value(out).type.dtype != DType::kBool) return false;
  }
  return true;
}

bool NarrowsBack(const Graph& g, const Node& n, DType wide) {
  if (n.kind != OpKind::kCast) return false;
  for (ValueId out : n.outputs) {
    if (BitsOf(g.value(out).type.dtype) >= BitsOf(wide)) return false;
  }
  return true;
}

// Every use of `v` compares it (booleans out) or casts it down, looking through layout ops.
bool UsesOnlyCompare(const Graph& g, const Value& v, DType wide, int depth) {
  if (depth > 8 || v.users.empty() || std::ranges::find(g.outputs(), v.id) != g.outputs().end())
    return false;
  for (NodeId user : v.users) {
    const Node& n = g.node(user);
    if (YieldsOnlyBooleans(g, n) || NarrowsBack(g, n, wide)) continue;
    if (n.kind != OpKind::kLayout) return false;
    for (ValueId out : n.outputs) {
      if (!UsesOnlyCompare(g, g.value(out), wide, depth + 1)) return false;
    }
  }
  return true;
}

bool UsesOnlyNarrowing(const Graph& g, const Value& v, DType wide, int depth);

// The one computation a call passes its operands to in order (an HLO `call` or `fusion`, a
// StableHLO `func.call`); null for loops and branches, whose parameters are not the operands.
const Graph* PositionalCallee(const Node& n) {
  if (n.kind != OpKind::kControlFlow || n.subgraphs.size() != 1) return nullptr;
  const Graph* callee = n.subgraphs.front().graph.get();
  return callee != nullptr && callee->inputs().size() == n.inputs.size() ? callee : nullptr;
}

// Every parameter of the callee that `v` is passed as is only cast down there.
bool CalleeNarrows(const Graph& callee, const Node& call, ValueId v, DType wide, int depth) {
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    if (call.inputs[i] != v) continue;
    if (!UsesOnlyNarrowing(callee, callee.value(callee.inputs()[i]), wide, depth + 1)) return false;
  }
  return true;
}

// Every use of `v` casts it down, looking through layout ops and into the functions it is passed
// to.
bool UsesOnlyNarrowing(const Graph& g, const Value& v, DType wide, int depth) {
  if (depth > 8 || v.users.empty() || std::ranges::find(g.outputs(), v.id) != g.outputs().end())
    return false;
  for (NodeId user : v.users) {
    const Node& n = g.node(user);
    if (NarrowsBack(g, n, wide)) continue;
    if (const Graph* callee = PositionalCallee(n)) {
      if (!CalleeNarrows(*callee, n, v.id, wide, depth)) return false;
      continue;
    }
    if (n.kind != OpKind::kLayout) return false;
    for (ValueId out : n.outputs) {
      if (!UsesOnlyNarrowing(g, g.value(out), wide, depth + 1)) return false;
    }
  }
  return true;
}

}  // namespace

bool FoldedLiteral(const DTypeOrigin& origin) {
  if (origin.kind != DTypeOrigin::Kind::kNode || origin.graph == nullptr) return false;
  if (origin.node->kind != OpKind::kConstant) return false;
  return UsesOnlyNarrowing(*origin.graph, *origin.value, origin.value->type.dtype, 0);
}

bool ConfinedToComparisons(const DTypeOrigin& origin) {
  if (origin.kind != DTypeOrigin::Kind::kNode || origin.graph == nullptr) return false;
  const Node& n = *origin.node;
  const DType wide = origin.value->type.dtype;
  if (n.kind != OpKind::kCast && n.kind != OpKind::kConstant) return false;
  if (n.kind == OpKind::kCast) {
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const DType from = origin.graph->value(in).type.dtype;
      if (BitsOf(from) >= BitsOf(wide) || BitsOf(from) == 0) return false;
    }
  }
  return UsesOnlyCompare(*origin.graph, *origin.value, wide, 0);
}

DTypeUse FindDTypeOrigins(const Graph& graph, DType dtype) {
  DTypeUse use;
  Collect(graph, graph.name(), dtype, use);
  return use;
}

namespace {

std::string Float64Cause(DTypeOrigin::Kind kind, Framework framework) {
  switch (framework) {
    case Framework::kKeras:
      return kind == DTypeOrigin::Kind::kInput
                 ? "the Input layer is float64 (`keras.Input(..., dtype=\"float64\")`, or NumPy "
                   "float64 data with `keras.config.set_floatx(\"float64\")`)"
                 : "the layers' dtype policy is float64 (`dtype=\"float64\"` on a layer, or "
                   "`keras.config.set_floatx(\"float64\")`)";
    case Framework::kJax:
      return kind == DTypeOrigin::Kind::kInput
                 ? "the program was traced with JAX's x64 mode on (`jax_enable_x64`), so float64 "
                   "NumPy arrays stay float64"
                 : "the program was traced with JAX's x64 mode on (`jax_enable_x64`): parameters "
                   "made from NumPy float64 arrays stay float64";
    case Framework::kTensorFlow:
      return kind == DTypeOrigin::Kind::kInput
                 ? "the signature takes float64 (a `tf.TensorSpec` or NumPy array in float64, "
                   "NumPy's default)"
                 : "the variables or constants were made from NumPy float64 arrays (NumPy's "
                   "default) or with `dtype=tf.float64`";
    default:
      return "";
  }
}

// How the model's framework spells a cast to `dtype`, for the likely cause of a Cast.
std::string CastExample(Framework framework, DType dtype) {
  const std::string name(LongNameOf(dtype));
  const bool f64 = dtype == DType::kFloat64;
  switch (framework) {
    case Framework::kJax:
      return "`x.astype(jnp." + name + ")`" + (f64 ? " or NumPy float64 math, with x64 on" : "");
    case Framework::kTensorFlow:
    case Framework::kKeras:
      return "`tf.cast(x, tf." + name + ")`" + (f64 ? " or NumPy float64 math" : "");
    default:
      return "`.to(" + name + ")`" + (f64 ? ", `.double()`, or NumPy float64 math" : "");
  }
}

}  // namespace

std::string LikelyCause(const DTypeOrigin& origin, DType dtype, Framework framework) {
  const std::string name(LongNameOf(dtype));
  if (dtype == DType::kFloat64 && origin.kind != DTypeOrigin::Kind::kNode) {
    if (std::string cause = Float64Cause(origin.kind, framework); !cause.empty()) return cause;
  }
  switch (origin.kind) {
    case DTypeOrigin::Kind::kInput:
      if (dtype == DType::kFloat64) {
        return "the model was exported with float64 inputs: a NumPy array (float64 by default) or "
               "`model.double()` at export time";
      }
      return "the model takes " + name + " input data";
    case DTypeOrigin::Kind::kWeights:
      if (dtype == DType::kFloat64) {
        return "the parameters themselves are float64, e.g. `model.double()` or weights built from "
               "NumPy float64 arrays";
      }
      return "the parameters are stored as " + name;
    case DTypeOrigin::Kind::kNode:
      if (origin.node != nullptr && origin.node->op == Op::kCast)
        return "an explicit cast to " + name + " in the model code (e.g. " +
               CastExample(framework, dtype) + ")";
      if (origin.node != nullptr && origin.node->op == Op::kConstant) {
        return "a " + name + " constant" +
               (dtype == DType::kFloat64 ? " (a NumPy float64 scalar or array baked into the graph)"
                                         : "");
      }
      return "`" + (origin.node ? origin.node->QualifiedOp() : std::string("op")) + "` produces " +
             name;
  }
  return {};
}

std::string OtherOriginsNote(const DTypeUse& use, DType dtype, std::string_view tail) {
  if (use.origins.size() < 2) return {};
  auto name = [](const DTypeOrigin& o) {
    if (o.kind == DTypeOrigin::Kind::kWeights) {
      return o.weight_count == 1 ? "weight `" + o.value->name + "`"
                                 : std::to_string(o.weight_count) + " weights";
    }
    return "`" +
           (o.value != nullptr  ? o.value->name
            : o.node != nullptr ? o.node->name
                                : o.graph_path) +
           "`";
  };
  std::vector<std::string> others;
  for (std::size_t i = 1; i < use.origins.size() && i <= 4; ++i)
    others.push_back(name(use.origins[i]));
  return std::string(LongNameOf(dtype)) + " also enters at " + Join(others, ", ") +
         (use.origins.size() > 5 ? ", ..." : "") + " (" + std::to_string(use.origins.size()) +
         " places" + std::string(tail) + ")";
}

Diagnostic OriginFinding(std::string_view code, Severity severity, const DTypeOrigin& origin,
                         DType dtype, const DTypeRule& rule, const DTypeUse& use,
                         const std::string& target_name, std::string_view verdict,
                         Framework framework) {
  const std::string dt(LongNameOf(dtype));
  const std::string tail = ", which " + target_name + " " + std::string(verdict);
  Diagnostic d;
  d.code = std::string(code);
  d.severity = severity;
  switch (origin.kind) {
    case DTypeOrigin::Kind::kInput:
      d.message = "input `" + origin.value->name + "` is " + dt + tail;
      d.location.graph = origin.graph_path;
      break;
    case DTypeOrigin::Kind::kWeights:
      d.message = Plural(origin.weight_count, "weight is ", "weights are ") + dt + " (first: `" +
                  origin.value->name + "`)" + tail;
      d.location.graph = origin.graph_path;
      break;
    case DTypeOrigin::Kind::kNode:
      d.message = "`" + origin.node->QualifiedOp() + "` produces " + dt + " value `" +
                  origin.value->name + "`" + tail;
      d.location = LocationOf(origin.graph_path, *origin.node);
      break;
  }
  d.location.value = origin.value->name;
  d.notes.push_back("likely cause: " + LikelyCause(origin, dtype, framework));
  d.notes.push_back(rule.why + " (source: " + rule.source + ")");
  if (use.values > 1) {
    d.notes.push_back(Plural(use.values, "value", "values") + " in the model are " + dt);
  }
  return d;
}

}  // namespace tpudoctor
