// PIPE001 python-in-pipeline: `tf.py_function` / `tf.numpy_function` inside a tf.data function
// (a `map`, `filter`, `flat_map`): Python on the host's critical path, serialized by the GIL.
#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"

namespace tpudoctor {
namespace {

bool IsPython(const Node& n) { return n.op == Op::kPythonCall; }

class Pipe001PythonInPipeline final : public Check {
 public:
  std::string_view code() const override { return "PIPE001"; }
  std::string_view name() const override { return "python-in-pipeline"; }
  std::string_view summary() const override {
    return "a tf.data function calls Python (tf.py_function / tf.numpy_function): the input "
           "pipeline is held to one core by the GIL";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    pipe::ForEachDatasetOp(ctx, [&](const Graph& g, const Node& dataset) {
      for (const Subgraph& sub : dataset.subgraphs) {
        ForEachNodeDeep(*sub.graph, [&](const Graph&, const Node& n) {
          if (!IsPython(n)) return;
          Diagnostic d = NewFinding();
          d.severity = Severity::kWarning;
          d.message = pipe::Named(dataset) + " runs Python (" + pipe::Named(n) +
                      ") for every element: the pipeline is serialized by the GIL and cannot "
                      "keep a TPU fed";
          d.location = pipe::At(g, dataset);
          d.notes.push_back(
              "num_parallel_calls does not help: py_function and numpy_function hold the Python "
              "global interpreter lock, so elements are processed one at a time");
          d.fix =
              Fix{"rewrite the function with TensorFlow ops (tf.image, tf.strings, tf.io) so "
                  "tf.data runs it in C++ threads; or precompute the result into the "
                  "TFRecords",
                  FixApplicability::kDisplayOnly};
          sink.Add(std::move(d));
        });
      }
    });
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe001PythonInPipeline() {
  return std::make_unique<Pipe001PythonInPipeline>();
}

}  // namespace tpudoctor
