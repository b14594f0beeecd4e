#include <algorithm>

#include "src/script/rules/factories.h"
#include "src/script/rules/torch_xla.h"

namespace tpudoctor::script {
namespace {

// Whether the jit's own arguments (`out_shardings=`, `in_shardings=`, static arguments) read a
// name the loop binds — its targets, or a name assigned in its body (`for layer_name, n in groups:
// jax.jit(f, out_shardings=sh[layer_name])`; `sharding = NamedSharding(mesh, spec_of[i]);
// jax.jit(alloc, out_shardings=sharding)`): each iteration asks for a different program, so a
// function made once would compile on every iteration as well.
bool ConfiguredPerIteration(const Call& jit) {
  if (!jit.loop.is("for_statement") && !jit.loop.is("while_statement")) return false;
  std::vector<std::string_view> targets;
  auto add_targets = [&](Node left) {
    Walk(left, [&](Node n, int) {
      if (n.is("identifier")) targets.push_back(n.text());
      return true;
    });
  };
  if (jit.loop.is("for_statement")) add_targets(jit.loop.field("left"));
  Walk(jit.loop.field("body"), [&](Node n, int) {
    if (n.is("assignment") && n.end() <= jit.node.begin()) add_targets(n.field("left"));
    return !n.is("function_definition") && !n.is("class_definition") && !n.is("lambda");
  });
  bool reads = false;
  for (const auto& [keyword, value] : jit.kwargs) {
    Walk(value, [&](Node n, int) {
      if (n.is("identifier") &&
          std::find(targets.begin(), targets.end(), n.text()) != targets.end()) {
        reads = true;
      }
      return !reads;
    });
  }
  return reads;
}

// Whether the jitted function is only compiled ahead of time, one program per iteration on
// purpose: the name it is assigned to is given to `jax.export.export` or lowered (`.lower(...)`,
// `.trace(...)`) later in the loop, and never called there (an exporter of one artifact per input
// signature). By name, not by binding: the exporter may assign the name in both arms of an `if`.
bool OnlyCompiledAheadOfTime(const ScriptModel& model, const Call& jit) {
  const Node assignment = jit.node.parent();
  if (!assignment.is("assignment") || !assignment.field("left").is("identifier")) return false;
  const std::string_view name = assignment.field("left").text();
  bool ahead_of_time = false;
  for (const Call& c : model.CallsIn(jit.loop)) {
    if (c.node.begin() < jit.node.end()) continue;
    if (c.callee.is("identifier") && c.callee.text() == name) return false;  // called
    if (c.name.ends_with("export.export") && !c.args.empty() && c.args[0].text() == name)
      ahead_of_time = true;
    if ((c.method == "lower" || c.method == "trace") && c.receiver && c.receiver.text() == name)
      ahead_of_time = true;
  }
  return ahead_of_time;
}

// jax.jit of a function created inside a loop: JAX caches compilations by the function object, so
// a lambda or a def made anew on each iteration is traced and compiled again every time.
class Py004 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY004", "jit-in-loop",
                   "jax.jit of a function created inside a loop compiles it again on every "
                   "iteration")
  void Run(const ScriptContext& c) const override {
    for (const Call& call : c.model.calls()) {
      if (call.name != "jax.jit" && call.name != "jax.pmap") continue;
      if (!call.loop || call.args.empty()) continue;
      Node fn = call.args[0];
      bool made_in_loop = fn.is("lambda");
      if (fn.is("identifier")) {
        const int f = c.model.LocalFunction(fn.text());
        made_in_loop = f >= 0 && Within(c.model.functions()[f].node, call.loop);
      }
      if (!made_in_loop || ConfiguredPerIteration(call) || OnlyCompiledAheadOfTime(c.model, call))
        continue;
      Diagnostic d = c.Finding(code(), Severity::kWarning, call.node,
                               "`" + std::string(call.callee.text()) +
                                   "` of a function made inside the loop: each iteration has a "
                                   "new function object, so JAX traces and compiles it again");
      d.fix =
          Fix{"define the function and jit it once, before the loop; pass what changes as "
              "arguments",
              FixApplicability::kDisplayOnly};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy004JitInLoop() { return std::make_unique<Py004>(); }

}  // namespace tpudoctor::script
