#include "src/script/rules/factories.h"

namespace tpudoctor::script {
namespace {

// Whether code in `function` (or at module level, -1) runs inside a tf.function: it or a function
// around it is one, or it is called from one.
bool InTfFunction(const ScriptModel& model, int function) {
  return model.InFunctionWhere(function, [&](const Function& fn) {
    if (fn.tf_function) return true;
    // Called by name from a tf.function's body: traced with it.
    for (const Call& c : model.calls()) {
      if (c.function >= 0 && model.functions()[c.function].tf_function &&
          model.LocalCallee(c) >= 0 && c.method == fn.name) {
        return true;
      }
    }
    return false;
  });
}

// Whether the step function given to strategy.run is visibly plain Python: a lambda or a def of
// the script that is not a tf.function (an imported or attribute function is not judged).
bool PlainStep(const ScriptModel& model, Node fn) {
  if (fn.is("lambda")) return true;
  if (!fn.is("identifier")) return false;
  const int f = model.FunctionNamed(fn);
  return f >= 0 && !model.functions()[f].tf_function && model.ValueAt(fn).null();
}

// TPUStrategy.run called eagerly with a plain Python step: TensorFlow's TPUStrategy refuses it
// (tpu_strategy.py: "TPUStrategy.run(fn, ...) does not support pure eager execution") and raises
// NotImplementedError; the step must be a tf.function or run inside one.
class Py007 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY007", "strategy-run-eager",
                   "TPUStrategy.run called eagerly with a step that is not a tf.function")
  void Run(const ScriptContext& c) const override {
    for (const Call& call : c.model.calls()) {
      if (call.method != "run" || !call.receiver || call.args.empty()) continue;
      if (c.model.KindOf(call.receiver) != Kind::kStrategy) continue;
      if (InTfFunction(c.model, call.function) || !PlainStep(c.model, call.args[0])) continue;
      Diagnostic d = c.Finding(
          code(), Severity::kError, call.node,
          "`" + std::string(call.callee.text()) + "(" +
              std::string(call.args[0].is("lambda") ? "lambda ..." : call.args[0].text()) +
              ", ...)` runs eagerly with a plain Python step: TPUStrategy "
              "raises NotImplementedError (it does not support pure eager "
              "execution)");
      d.fix =
          Fix{"decorate the step with `@tf.function`, or call `strategy.run` inside a "
              "`@tf.function` (which also runs many steps per call)",
              FixApplicability::kDisplayOnly};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy007StrategyRunEager() { return std::make_unique<Py007>(); }

}  // namespace tpudoctor::script
