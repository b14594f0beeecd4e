#include "tpudoctor/ir/shape.h"

#include <limits>
#include <mutex>
#include <unordered_set>

namespace tpudoctor {

std::optional<std::int64_t> CheckedMul(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::int64_t> CheckedAdd(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

const std::string* Dim::Intern(std::string name) {
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();
  const std::lock_guard<std::mutex> lock(mu);
  return &*names->insert(std::move(name)).first;
}

const std::string& Dim::symbol() const {
  static const std::string kNone;
  return symbol_ != nullptr ? *symbol_ : kNone;
}

std::string Dim::ToString() const {
  switch (kind_) {
    case Kind::kStatic:
      return std::to_string(value_);
    case Kind::kSymbol:
      return symbol();
    case Kind::kBounded:
      return "<=" + std::to_string(value_);
    case Kind::kUnknown:
      break;
  }
  return "?";
}

Shape Shape::OfStatic(const std::vector<std::int64_t>& sizes) {
  std::vector<Dim> dims;
  dims.reserve(sizes.size());
  for (std::int64_t s : sizes) dims.push_back(Dim::Static(s));
  return Shape(std::move(dims));
}

bool Shape::is_static() const {
  if (!rank_known_) return false;
  for (const Dim& d : dims_) {
    if (!d.is_static()) return false;
  }
  return true;
}

std::optional<std::int64_t> Shape::NumElements() const {
  if (!is_static()) return std::nullopt;
  std::int64_t n = 1;
  for (const Dim& d : dims_) {
    auto next = CheckedMul(n, d.value());
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

std::string Shape::ToString() const {
  if (!rank_known_) return "[*]";
  std::string out = "[";
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ',';
    out += dims_[i].ToString();
  }
  out += ']';
  return out;
}

std::string_view NameOf(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return "tensor";
    case ValueKind::kSequence:
      return "seq";
    case ValueKind::kMap:
      return "map";
    case ValueKind::kOptional:
      return "opt";
    case ValueKind::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<std::int64_t> TensorType::SizeInBytes() const {
  if (kind != ValueKind::kTensor) return std::nullopt;
  const int bits = BitsOf(dtype);
  if (bits == 0) return std::nullopt;
  auto n = shape.NumElements();
  if (!n) return std::nullopt;
  auto total_bits = CheckedMul(*n, bits);
  if (!total_bits) return std::nullopt;
  return (*total_bits + 7) / 8;
}

std::string TensorType::ToString() const {
  std::string inner = std::string(NameOf(dtype)) + shape.ToString();
  if (kind == ValueKind::kTensor) return inner;
  return std::string(NameOf(kind)) + "<" + inner + ">";
}

}  // namespace tpudoctor
