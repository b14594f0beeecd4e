#include <algorithm>
#include <unordered_map>

#include "src/script/rules/factories.h"

namespace tpudoctor::script {
namespace {

bool MakesKerasModel(const ScriptModel& model, const Call& call) {
  return model.KindOf(call.node) == Kind::kKerasModel ||
         call.name.starts_with("keras.applications.");
}

// Whether the call runs inside `with <something>.scope():`.
bool InScope(const Call& call) {
  for (Node w : call.with_contexts) {
    if (w.is("call") && w.field("function").is("attribute") &&
        w.field("function").field("attribute").text() == "scope") {
      return true;
    }
  }
  return false;
}

// A call that trains the model it is made on, or compiles it inside a strategy's scope: Keras's
// compile then checks that the model's variables were made in that scope and raises if not
// (`_validate_compile`). Compiled outside any scope and never trained, a model is the host's.
bool TrainsOrCompilesInScope(const Call& c) {
  return c.method == "fit" || c.method == "train_on_batch" || c.method == "fit_generator" ||
         (c.method == "compile" && InScope(c));
}

// By name, where the name is last trained or compiled in a scope (`name.fit(...)`).
using LastTraining = std::unordered_map<std::string_view, std::uint32_t>;

LastTraining TrainingCalls(const ScriptModel& model) {
  LastTraining out;
  for (const Call& c : model.calls()) {
    if (c.receiver && c.receiver.is("identifier") && TrainsOrCompilesInScope(c)) {
      std::uint32_t& last = out[c.receiver.text()];
      last = std::max(last, c.node.begin());
    }
  }
  return out;
}

// Whether the model a call builds is assigned to a name that is then trained, or compiled in a
// strategy's scope (a model built outside the scope only to predict on the host, to compare with,
// or to copy weights into, is fine).
bool TrainedLater(const Call& call, const LastTraining& training) {
  Node assignment = call.node.parent();
  if (!assignment.is("assignment") || !assignment.field("left").is("identifier")) return false;
  const auto it = training.find(assignment.field("left").text());
  return it != training.end() && it->second >= call.node.end();
}

// A Keras model built outside `strategy.scope()` in the code that made a TPUStrategy, and then
// trained, or compiled inside the scope (a model built outside to predict on the host, or
// compiled there and never trained, is not flagged): its variables are created on the host's
// default device, so Keras either refuses it under the strategy or trains it without the TPU.
class Py006 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY006", "outside-strategy-scope",
                   "a Keras model built outside strategy.scope() next to a TPUStrategy")
  void Run(const ScriptContext& c) const override {
    std::vector<int> strategy_scopes;  // functions (or -1) that create a TPUStrategy
    for (const Call& call : c.model.calls()) {
      if (c.model.KindOf(call.node) == Kind::kStrategy) strategy_scopes.push_back(call.function);
    }
    if (strategy_scopes.empty()) return;
    const auto training = TrainingCalls(c.model);
    for (const Call& call : c.model.calls()) {
      if (std::find(strategy_scopes.begin(), strategy_scopes.end(), call.function) ==
              strategy_scopes.end() ||
          InScope(call)) {
        continue;
      }
      if (!MakesKerasModel(c.model, call) || !TrainedLater(call, training)) continue;
      Diagnostic d = c.Finding(code(), Severity::kError, call.node,
                               "the model is built outside `strategy.scope()`: its variables are "
                               "not placed on the TPU, so Keras refuses to fit it with the "
                               "strategy or trains it on the host");
      d.fix = Fix{"build and compile the model inside `with strategy.scope():`",
                  FixApplicability::kDisplayOnly};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy006OutsideStrategyScope() { return std::make_unique<Py006>(); }

}  // namespace tpudoctor::script
