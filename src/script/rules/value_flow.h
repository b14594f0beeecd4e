// Where a value goes: whether a tensor a call makes (or an expression computes) reaches a model,
// followed through the names it is assigned to and the calls it goes through. Rules whose finding
// matters only for what the model receives (a float16 tensor, a batch padded to its longest text)
// ask this before they report.
#pragma once

#include <functional>

#include "src/script/script_model.h"

namespace tpudoctor::script {

struct Flow {
  // A call that takes the value and ends its path there though it is neither a model nor a
  // framework function (TPU002: a cast to a dtype the TPU computes natively).
  std::function<bool(const Call& consumer)> ends_at;
};

// Whether the value of `expr` reaches a model: given to a callable of the script (`model(x)`,
// `layer(x)`, `model.fit(x)`; not print/str/len), to an input pipeline (`from_tensor_slices`,
// `TensorDataset`), returned (a dataset's map function, a forward), or assigned to a name a later
// use of which does. A framework function's result carries the value on (`tf.reshape(x)`).
bool ReachesModel(const ScriptModel& model, Node expr, const Flow& flow = {});

// Whether `use` holds for every later use of the name an assignment binds (`x = <value>`), in the
// same function (or at module level): the identifiers that read that binding, not one that
// assigns the name again. Stops at the first use it does not hold for.
bool EveryUse(const ScriptModel& model, Node assignment, const std::function<bool(Node)>& use);

}  // namespace tpudoctor::script
