#include "tpudoctor/ir/dtype.h"

#include <array>

namespace tpudoctor {
namespace {

using C = DTypeClass;
constexpr std::array kTraits = {
    DTypeTraits{DType::kUnknown, "unknown", "unknown", 0, C::kUnknown},
    DTypeTraits{DType::kBool, "pred", "bool", 8, C::kBool},
    DTypeTraits{DType::kInt4, "s4", "int4", 4, C::kSignedInt},
    DTypeTraits{DType::kInt8, "s8", "int8", 8, C::kSignedInt},
    DTypeTraits{DType::kInt16, "s16", "int16", 16, C::kSignedInt},
    DTypeTraits{DType::kInt32, "s32", "int32", 32, C::kSignedInt},
    DTypeTraits{DType::kInt64, "s64", "int64", 64, C::kSignedInt},
    DTypeTraits{DType::kUInt4, "u4", "uint4", 4, C::kUnsignedInt},
    DTypeTraits{DType::kUInt8, "u8", "uint8", 8, C::kUnsignedInt},
    DTypeTraits{DType::kUInt16, "u16", "uint16", 16, C::kUnsignedInt},
    DTypeTraits{DType::kUInt32, "u32", "uint32", 32, C::kUnsignedInt},
    DTypeTraits{DType::kUInt64, "u64", "uint64", 64, C::kUnsignedInt},
    DTypeTraits{DType::kFloat8E4M3FN, "f8e4m3fn", "float8_e4m3fn", 8, C::kFloat},
    DTypeTraits{DType::kFloat8E4M3FNUZ, "f8e4m3fnuz", "float8_e4m3fnuz", 8, C::kFloat},
    DTypeTraits{DType::kFloat8E5M2, "f8e5m2", "float8_e5m2", 8, C::kFloat},
    DTypeTraits{DType::kFloat8E5M2FNUZ, "f8e5m2fnuz", "float8_e5m2fnuz", 8, C::kFloat},
    DTypeTraits{DType::kFloat4E2M1, "f4e2m1fn", "float4_e2m1fn", 4, C::kFloat},
    DTypeTraits{DType::kFloat16, "f16", "float16", 16, C::kFloat},
    DTypeTraits{DType::kBFloat16, "bf16", "bfloat16", 16, C::kFloat},
    DTypeTraits{DType::kFloat32, "f32", "float32", 32, C::kFloat},
    DTypeTraits{DType::kFloat64, "f64", "float64", 64, C::kFloat},
    DTypeTraits{DType::kComplex64, "c64", "complex64", 64, C::kComplex},
    DTypeTraits{DType::kComplex128, "c128", "complex128", 128, C::kComplex},
    DTypeTraits{DType::kString, "string", "string", 0, C::kString},
};

constexpr bool TableMatchesEnum() {
  for (std::size_t i = 0; i < kTraits.size(); ++i) {
    if (static_cast<std::size_t>(kTraits[i].dtype) != i) return false;
  }
  return kTraits.size() == static_cast<std::size_t>(DType::kString) + 1;
}
static_assert(TableMatchesEnum(), "kTraits must list every DType, in enum order");

}  // namespace

const DTypeTraits& TraitsOf(DType dtype) { return kTraits[static_cast<std::size_t>(dtype)]; }

std::span<const DTypeTraits> AllDTypes() { return kTraits; }

std::optional<DType> ParseDType(std::string_view name) {
  for (const auto& t : kTraits) {
    if (t.name == name || t.long_name == name) return t.dtype;
  }
  return std::nullopt;
}

}  // namespace tpudoctor
