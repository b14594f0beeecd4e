#include "tpudoctor/ir/model_facts.h"

namespace tpudoctor {

std::string_view NameOf(Framework framework) {
  switch (framework) {
    case Framework::kUnknown:
      return "unknown";
    case Framework::kPyTorch:
      return "pytorch";
    case Framework::kKeras:
      return "keras";
    case Framework::kTensorFlow:
      return "tensorflow";
    case Framework::kJax:
      return "jax";
  }
  return "unknown";
}

std::string_view NameOf(BatchSource source) {
  switch (source) {
    case BatchSource::kNone:
      return "none";
    case BatchSource::kFlag:
      return "flag";
    case BatchSource::kModel:
      return "model";
  }
  return "none";
}

}  // namespace tpudoctor
