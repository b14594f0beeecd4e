#include "src/script/rules/factories.h"
#include "src/script/rules/tfdata.h"

namespace tpudoctor::script {
namespace {

// dataset.map(f) without num_parallel_calls (or with 1): one element at a time on one core.
// TensorFlow 2's map_parallelization rewrite (on by default: tf.data OptimizationOptions) runs a
// map of a *stateless* function in parallel anyway, so without num_parallel_calls this is a
// warning only when the function is stateful (random augmentation, py_function) and the rewrite
// leaves it sequential, and a note otherwise. `num_parallel_calls=1` asks for one at a time: a
// warning.
class Pipe002 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PIPE002", "sequential-map",
                   "a tf.data map without num_parallel_calls processes one element at a time")
  void Run(const ScriptContext& c) const override {
    for (const Call* call : DatasetCalls(c.model, "map")) {
      Node parallel = Argument(*call, 1, "num_parallel_calls");
      const bool one = parallel && IntLiteral(parallel) == 1;
      if ((parallel && !one) || (!parallel && call->splat)) continue;
      Node body = FunctionBody(c.model, Argument(*call, 0, "map_func"));
      const bool stateful = body && CallsStateful(c.model, body);
      std::string message;
      Severity severity = Severity::kWarning;
      if (one) {
        message =
            "`.map(...)` with num_parallel_calls=1 maps one element at a time: the host's "
            "other cores sit idle while the TPU waits";
      } else if (stateful) {
        message =
            "`.map(...)` of a stateful function (random ops or Python) without "
            "num_parallel_calls maps one element at a time: tf.data parallelizes only "
            "stateless maps by itself, so the host's other cores sit idle while the TPU "
            "waits";
      } else {
        severity = Severity::kNote;
        message =
            "`.map(...)` without num_parallel_calls: TensorFlow 2 parallelizes a stateless "
            "map by itself (map_parallelization), older versions and stateful functions "
            "map one element at a time; say it explicitly";
      }
      // A pipeline the script only iterates itself (a preparation pass, a look at elements)
      // does not feed the step: a note.
      const bool looked_at = severity == Severity::kWarning && c.TfData().OnlyLookedAt(*call);
      if (looked_at) severity = Severity::kNote;
      Diagnostic d = c.Finding(code(), severity, call->node, message);
      if (looked_at) {
        d.notes.emplace_back(TfDataFacts::kLookedAtNote);
      }
      const std::string autotune = c.Autotune();
      d.fix = Fix{"map with `num_parallel_calls=tf.data.AUTOTUNE`", FixApplicability::kDisplayOnly};
      if (!autotune.empty()) {
        d.fix->applicability = FixApplicability::kSafe;
        d.fix->edits.push_back(one ? Replace(parallel, autotune)
                                   : AddKeyword(*call, "num_parallel_calls", autotune));
      }
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePipe002SequentialMap() { return std::make_unique<Pipe002>(); }

}  // namespace tpudoctor::script
