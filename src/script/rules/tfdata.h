// What the tf.data rules share: the dataset method calls of a script.
#pragma once

#include <string_view>
#include <unordered_set>
#include <vector>

#include "src/script/script_model.h"

namespace tpudoctor::script {

// Calls of `method` on a tf.data dataset (`ds.map(...)`, `tf.data.Dataset.range(9).map(...)`).
std::vector<const Call*> DatasetCalls(const ScriptModel& model, std::string_view method);

// An argument given by position `index` or by `keyword`; null when absent.
Node Argument(const Call& call, std::size_t index, std::string_view keyword);

// The calls that built the dataset a transformation is applied to (its receiver's chain).
std::vector<const Call*> ChainBefore(const ScriptModel& model, const Call& call);

// Whether a chain contains a call of `method` on a dataset (or `.apply(...<method>(...))`, the
// tf.data.experimental / tf.contrib form).
bool HasStep(const std::vector<const Call*>& chain, std::string_view method);

// The body of the function a transformation was given: a lambda, or a def of this file; null when
// the model cannot see it (a method, an imported function).
Node FunctionBody(const ScriptModel& model, Node fn);

// A dataset where training consumes it.
struct TrainingInput {
  Node dataset;
  // Given to `strategy.experimental_distribute_dataset`, which ends the pipeline with a prefetch
  // of its own (tf.distribute's input guide); what `distribute_datasets_from_function`'s function
  // returns gets none.
  bool prefetched = false;
};

// What the tf.data rules share, computed once per script (ScriptContext::TfData).
struct TfDataFacts {
  // Where training consumes datasets: the first argument (or `x=`) of Keras `fit`, what
  // `strategy.experimental_distribute_dataset` takes, what the function given to
  // `strategy.distribute_datasets_from_function` returns, and what a for loop iterates whose body
  // takes a training step (a GradientTape, apply_gradients, strategy.run, train_on_batch, or one
  // of the script's tf.function's that does). Only there is a pipeline known to be finished (a
  // dataset a function returns may still be transformed by its caller).
  std::vector<TrainingInput> training_inputs;
  // The calls (by node id) that build a training pipeline: the chains of the training inputs and
  // of the datasets the script's functions return (an input_fn's dataset is consumed elsewhere).
  // A demonstration that builds a dataset and prints it is not one.
  std::unordered_set<const void*> training_pipeline_calls;
  // The calls of pipelines the script iterates in loops that take no training step (a data
  // preparation pass that writes files, a look at a few elements).
  std::unordered_set<const void*> looked_at_pipeline_calls;
  // The note a finding carries when OnlyLookedAt made it a note.
  static constexpr std::string_view kLookedAtNote =
      "only a note: the script iterates this pipeline itself, in no training step (a preparation "
      "pass, a look at elements); a pipeline starves a TPU where it feeds the step";
  // Whether a call builds a pipeline the script only iterates itself, outside training: what
  // starves a TPU there is a preparation pass, not the step's input.
  bool OnlyLookedAt(const Call& call) const {
    const void* id = call.node.id();
    return looked_at_pipeline_calls.contains(id) && !training_pipeline_calls.contains(id);
  }

  static TfDataFacts Of(const ScriptModel& model);
};

// The first call in a function body that runs Python: tf.py_function / tf.numpy_function /
// tf.compat.v1.py_func, or a call of one of the script's defs decorated with them, found also
// through the script's own functions the body calls (a few levels deep); null when none.
const Call* PythonCallWithin(const ScriptModel& model, Node body, int depth = 0);

// Whether a function body calls something stateful that tf.data's map_parallelization rewrite
// leaves sequential: random ops (tf.random.*, tf.image.random_*, NumPy's random) outside the
// body's Python conditions (under `if training:` the traced function may not hold them),
// py_function / numpy_function.
bool CallsStateful(const ScriptModel& model, Node body);

}  // namespace tpudoctor::script
