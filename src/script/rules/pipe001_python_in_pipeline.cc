#include "src/script/rules/factories.h"
#include "src/script/rules/tfdata.h"

namespace tpudoctor::script {
namespace {

// A tf.data transformation whose function calls Python: tf.py_function / tf.numpy_function hold
// the GIL, so the pipeline runs one element at a time whatever num_parallel_calls says.
class Pipe001 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PIPE001", "python-in-pipeline",
                   "a tf.data function calls Python (tf.py_function / tf.numpy_function)")
  void Run(const ScriptContext& c) const override {
    for (const char* method : {"map", "flat_map", "interleave", "filter"}) {
      for (const Call* call : DatasetCalls(c.model, method)) {
        Node fn =
            Argument(*call, 0, method == std::string_view("filter") ? "predicate" : "map_func");
        const Call* python = PythonCallWithin(c.model, FunctionBody(c.model, fn));
        if (python == nullptr) continue;
        const Position at = c.model.Locate(python->node);
        // A pipeline the script only iterates itself (a preparation pass, a look at elements)
        // does not feed the step: a note.
        const bool looked_at = c.TfData().OnlyLookedAt(*call);
        Diagnostic d = c.Finding(
            code(), looked_at ? Severity::kNote : Severity::kWarning, call->node,
            "`." + call->method + "(" + std::string(fn.is("lambda") ? "lambda ..." : fn.text()) +
                ")` runs Python (`" + std::string(python->callee.text()) +
                "`) for every element: tf.data serializes it on the GIL and cannot keep a TPU fed");
        d.notes.push_back("the Python call is at line " + std::to_string(at.line) +
                          (at.cell > 0 ? " of cell " + std::to_string(at.cell) : ""));
        d.notes.push_back(
            "num_parallel_calls does not help: py_function and numpy_function hold the Python "
            "global interpreter lock");
        if (looked_at) {
          d.notes.emplace_back(TfDataFacts::kLookedAtNote);
        }
        d.fix =
            Fix{"rewrite the function with TensorFlow ops (tf.image, tf.strings, tf.io) so "
                "tf.data runs it in C++ threads; or precompute its result into the TFRecords",
                FixApplicability::kDisplayOnly};
        c.Add(std::move(d));
      }
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePipe001PythonInPipeline() { return std::make_unique<Pipe001>(); }

}  // namespace tpudoctor::script
