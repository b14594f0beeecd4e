// Shape arithmetic shared by every frontend's shape rules: overflow-checked Dim arithmetic that
// keeps symbols where it can, NumPy broadcasting, axis normalisation and the output length of a
// sliding window (convolutions and pooling). One implementation, so ONNX, TensorFlow and Keras
// shapes agree on the same op.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tpudoctor/ir/shape.h"

namespace tpudoctor {

// Static where both sides are static (unknown on overflow); a symbol survives multiplying by 1,
// adding 0 or dividing by 1; anything else is unknown. Results may be negative (shape arithmetic
// multiplies by -1); SizeDim makes a negative size unknown.
Dim MulDims(const Dim& a, const Dim& b);
Dim AddDims(const Dim& a, const Dim& b);
Dim NegDim(const Dim& a);
Dim FloorDivDims(const Dim& a, const Dim& b);  // rounds toward negative infinity; x/x is 1
Dim SizeDim(std::int64_t size);                // static when size >= 0, else unknown

// NumPy broadcasting of two dims: equal dims stay, a static 1 gives way, a static dim wins over
// a symbol; two different symbols give unknown.
Dim BroadcastDim(const Dim& a, const Dim& b);
// NumPy broadcasting of shapes (right-aligned); nullopt when a rank is unknown.
std::optional<Shape> BroadcastShapes(std::span<const Shape* const> shapes);

// A possibly negative axis (-1 = last) as an index; nullopt when out of range.
std::optional<std::size_t> NormalizeAxis(std::int64_t axis, std::size_t rank);

enum class WindowPadding : std::uint8_t {
  kExplicit,  // `pad_total` elements added (ONNX pads, XLA padding)
  kSame,      // output = ceil(input / stride) (TF/Keras `SAME`/`same`/`causal`, ONNX SAME_*)
  kValid,     // no padding
};

// Output length of a window of `kernel` taps (dilated by `dilation`) sliding with `stride` over
// `in`. Unknown when `in` is not static or a parameter is not positive; with explicit padding,
// `ceil_mode` rounds a partial last window up (ONNX pooling).
Dim WindowOutput(const Dim& in, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                 WindowPadding padding, std::int64_t pad_total = 0, bool ceil_mode = false);

}  // namespace tpudoctor
