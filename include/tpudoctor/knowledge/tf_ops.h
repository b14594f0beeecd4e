// What tpu-doctor knows about TensorFlow ops (data/tf/ops.tsv, data/tf/const_inputs.tsv): the
// canonical ONNX-domain op the analyses treat each one as, whether it has an XLA kernel (and so
// runs inside the TPU computation), runs on the host, is a Python callback, or is a tf.data op;
// and which inputs XLA needs as compile-time constants.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

struct TfOpInfo {
  OpInfo info;
  std::string canonical;  // ONNX default-domain op, or empty
  bool pipeline = false;  // a tf.data op
  bool python = false;    // a Python callback (PyFunc, EagerPyFunc, PyFuncStateless)
  bool known = false;     // listed: an op TensorFlow defines
};

TfOpInfo LookupTfOp(std::string_view op);

// Names of the inputs of `op` that XLA requires to be compile-time constants ("shape" for
// Reshape); empty when none.
std::vector<std::string> TfConstantInputs(std::string_view op);

}  // namespace tpudoctor
