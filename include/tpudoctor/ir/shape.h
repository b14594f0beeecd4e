// Dim, Shape and TensorType: what the IR knows about a tensor's extent without its data.
//
// A Dim is one of four things: a static size (`128`), a named symbol the exporter left open
// (`batch`, `sequence`), a bounded dynamic size (`<=4096`: XLA's dynamic dims, which the compiler
// pads to the bound), or unknown (`?`: nobody could tell). A Shape has a known or unknown rank.
// Sizes in bytes are std::optional — a shape with any non-static dim has no size — and every
// product is overflow-checked, so a dim near 2^63 yields "no size", never a wrapped number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/ir/dtype.h"

namespace tpudoctor {

class Dim {
 public:
  enum class Kind : std::uint8_t { kStatic, kSymbol, kBounded, kUnknown };

  Dim() = default;  // unknown
  static Dim Static(std::int64_t size) { return Dim(Kind::kStatic, size, nullptr); }
  static Dim Symbol(std::string name) { return Dim(Kind::kSymbol, 0, Intern(std::move(name))); }
  static Dim Bounded(std::int64_t bound) { return Dim(Kind::kBounded, bound, nullptr); }
  static Dim Unknown() { return Dim(); }

  Kind kind() const { return kind_; }
  bool is_static() const { return kind_ == Kind::kStatic; }
  bool is_symbol() const { return kind_ == Kind::kSymbol; }
  bool is_bounded() const { return kind_ == Kind::kBounded; }
  bool is_unknown() const { return kind_ == Kind::kUnknown; }
  std::int64_t value() const { return value_; }  // static dims: the size
  std::int64_t bound() const { return value_; }  // bounded dims: the largest size
  const std::string& symbol() const;             // only for symbols; "" for the others

  std::string ToString() const;  // "128", "batch", "<=4096" or "?"
  // Symbols are interned, so equal names are the same pointer.
  friend bool operator==(const Dim&, const Dim&) = default;

 private:
  // The one copy of a symbol's name, kept for the life of the process. A Dim is then 24 trivially
  // copyable bytes: shapes are copied at every step of propagation.
  static const std::string* Intern(std::string name);
  Dim(Kind kind, std::int64_t value, const std::string* symbol)
      : kind_(kind), value_(value), symbol_(symbol) {}
  Kind kind_ = Kind::kUnknown;
  std::int64_t value_ = 0;
  const std::string* symbol_ = nullptr;
};

class Shape {
 public:
  Shape() = default;  // unknown rank
  explicit Shape(std::vector<Dim> dims) : rank_known_(true), dims_(std::move(dims)) {}
  static Shape UnknownRank() { return Shape(); }
  static Shape Scalar() { return Shape(std::vector<Dim>{}); }
  static Shape OfStatic(const std::vector<std::int64_t>& sizes);

  bool rank_known() const { return rank_known_; }
  std::size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& mutable_dims() { return dims_; }
  const Dim& dim(std::size_t i) const { return dims_[i]; }

  bool is_static() const;                           // rank known and every dim static
  std::optional<std::int64_t> NumElements() const;  // overflow-checked; nullopt unless static

  std::string ToString() const;  // "[batch,3,224,224]" or "[*]" for unknown rank
  friend bool operator==(const Shape&, const Shape&) = default;

 private:
  bool rank_known_ = false;
  std::vector<Dim> dims_;
};

// What kind of thing a value is. Most are tensors; ONNX also has sequences, maps and optionals,
// which no XLA program can hold.
enum class ValueKind : std::uint8_t { kTensor, kSequence, kMap, kOptional, kUnknown };
std::string_view NameOf(ValueKind kind);

struct TensorType {
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUnknown;  // for a sequence/optional: the element tensor's dtype
  Shape shape;

  std::optional<std::int64_t> SizeInBytes() const;  // overflow-checked; nullopt unless static
  std::string ToString() const;                     // "f32[batch,1000]", "seq<s64[?]>"
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// Overflow-checked helpers; nullopt on overflow or negative input.
std::optional<std::int64_t> CheckedMul(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> CheckedAdd(std::int64_t a, std::int64_t b);

}  // namespace tpudoctor
