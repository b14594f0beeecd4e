// What tpu-doctor knows about TensorFlow ops (data/tf/ops.tsv): the canonical ONNX-domain op the
// analyses treat each one as, and whether it has an XLA kernel (and so runs inside the TPU
// computation), runs on the host, is a Python callback, or is a tf.data op.
#pragma once

#include <string>
#include <string_view>

#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

struct TfOpInfo {
  OpInfo info;
  std::string canonical;  // ONNX default-domain op, or empty
  bool pipeline = false;  // a tf.data op
  bool python = false;    // a Python callback (PyFunc, EagerPyFunc, PyFuncStateless)
  bool known = false;     // listed: an op TensorFlow defines
};

// A reference into the static table (or the one entry for ops TensorFlow does not define).
const TfOpInfo& LookupTfOp(std::string_view op);

}  // namespace tpudoctor
