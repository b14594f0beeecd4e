#include "tpudoctor/ir/shape_math.h"

#include <algorithm>
#include <limits>

namespace tpudoctor {

Dim MulDims(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    std::int64_t v = 0;
    if (__builtin_mul_overflow(a.value(), b.value(), &v)) return Dim::Unknown();
    return Dim::Static(v);
  }
  if (a.is_static() && a.value() == 1) return b;
  if (b.is_static() && b.value() == 1) return a;
  return Dim::Unknown();
}

Dim AddDims(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    std::int64_t v = 0;
    if (__builtin_add_overflow(a.value(), b.value(), &v)) return Dim::Unknown();
    return Dim::Static(v);
  }
  if (a.is_static() && a.value() == 0) return b;
  if (b.is_static() && b.value() == 0) return a;
  return Dim::Unknown();
}

Dim NegDim(const Dim& a) {
  if (a.is_static() && a.value() != std::numeric_limits<std::int64_t>::min()) {
    return Dim::Static(-a.value());
  }
  return Dim::Unknown();
}

namespace {

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Dim FloorDivDims(const Dim& a, const Dim& b) {
  if (b.is_static() && b.value() == 1) return a;
  if (a.is_static() && b.is_static() && b.value() != 0 &&
      !(a.value() == std::numeric_limits<std::int64_t>::min() && b.value() == -1)) {
    return Dim::Static(FloorDiv(a.value(), b.value()));
  }
  if (a == b && !a.is_unknown()) return Dim::Static(1);
  return Dim::Unknown();
}

Dim SizeDim(std::int64_t size) { return size >= 0 ? Dim::Static(size) : Dim::Unknown(); }

Dim BroadcastDim(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_static() && a.value() == 1) return b;
  if (b.is_static() && b.value() == 1) return a;
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return Dim::Unknown();
}

std::optional<Shape> BroadcastShapes(std::span<const Shape* const> shapes) {
  std::size_t rank = 0;
  for (const Shape* s : shapes) {
    if (!s->rank_known()) return std::nullopt;
    rank = std::max(rank, s->rank());
  }
  std::vector<Dim> out(rank, Dim::Static(1));
  for (const Shape* s : shapes) {
    const std::size_t offset = rank - s->rank();
    for (std::size_t i = 0; i < s->rank(); ++i)
      out[offset + i] = BroadcastDim(out[offset + i], s->dim(i));
  }
  return Shape(std::move(out));
}

std::optional<std::size_t> NormalizeAxis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

Dim WindowOutput(const Dim& in, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                 WindowPadding padding, std::int64_t pad_total, bool ceil_mode) {
  if (!in.is_static() || stride <= 0 || kernel <= 0 || dilation <= 0) return Dim::Unknown();
  const std::int64_t n = in.value();
  std::int64_t span = 0;  // (kernel - 1) * dilation + 1, overflow-checked
  if (__builtin_mul_overflow(kernel - 1, dilation, &span) || __builtin_add_overflow(span, 1, &span))
    return Dim::Unknown();
  switch (padding) {
    case WindowPadding::kSame:
      return Dim::Static(n / stride + (n % stride != 0 ? 1 : 0));
    case WindowPadding::kValid:
      return Dim::Static(n < span ? 0 : (n - span) / stride + 1);
    case WindowPadding::kExplicit: {
      std::int64_t padded = 0;
      if (__builtin_add_overflow(n, pad_total, &padded) || padded < span) return Dim::Unknown();
      const std::int64_t room = padded - span;
      return Dim::Static(room / stride + (ceil_mode && room % stride != 0 ? 1 : 0) + 1);
    }
  }
  return Dim::Unknown();
}

}  // namespace tpudoctor
