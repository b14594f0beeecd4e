// DType: the element types a tensor in the IR can have, and one constexpr table of their traits.
//
// The enumerators are framework-neutral; frontends map their own codes onto them (ONNX
// TensorProto.DataType, HLO primitive types, torch ScalarType). Names follow XLA's short form
// (`f32`, `bf16`, `s64`) because that is what TPU error messages print. `DTypeTraitsOf` covers
// every enumerator; a static_assert in dtype.cc keeps the table and the enum in step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tpudoctor {

enum class DType : std::uint8_t {
  kUnknown,
  kBool,
  kInt4,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt4,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat8E4M3FN,
  kFloat8E4M3FNUZ,
  kFloat8E5M2,
  kFloat8E5M2FNUZ,
  kFloat4E2M1,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kString,
};

enum class DTypeClass : std::uint8_t {
  kUnknown,
  kBool,
  kSignedInt,
  kUnsignedInt,
  kFloat,
  kComplex,
  kString
};

struct DTypeTraits {
  DType dtype;
  std::string_view name;       // short name: "f32", "bf16", "s64"
  std::string_view long_name;  // what users call it: "float32", "bfloat16", "int64"
  int bits;                    // storage bits per element; 0 when not fixed (string, unknown)
  DTypeClass cls;
};

const DTypeTraits& TraitsOf(DType dtype);
inline std::string_view NameOf(DType dtype) { return TraitsOf(dtype).name; }
inline std::string_view LongNameOf(DType dtype) { return TraitsOf(dtype).long_name; }
inline bool IsFloat(DType dtype) { return TraitsOf(dtype).cls == DTypeClass::kFloat; }
inline int BitsOf(DType dtype) { return TraitsOf(dtype).bits; }

// All enumerators, in enum order.
std::span<const DTypeTraits> AllDTypes();

// Parses either the short or the long name ("f64" or "float64").
std::optional<DType> ParseDType(std::string_view name);

}  // namespace tpudoctor
