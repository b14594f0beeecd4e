// Where tensors live on the device: which values a convolution network keeps channels-minor, and
// a tensor's bytes in the target's tiled layout ((8,128) tiles on TPUs).
#include <algorithm>
#include <cmath>

#include "src/cost/rates.h"
#include "tpudoctor/cost/estimate.h"

namespace tpudoctor {
namespace {

// Ops that keep a convolution activation's layout: pointwise math, normalization, pooling,
// resizing, and layout ops that keep the batch and do not permute dims (concat, slice, pad).
bool KeepsConvLayout(const Node& n, const Shape& in, const Shape& out) {
  switch (n.kind) {
    case OpKind::kElementwise:
    case OpKind::kCast:
    case OpKind::kNormalization:
    case OpKind::kPool:
    case OpKind::kResize:
      return true;
    case OpKind::kLayout: {
      if (in.dim(0) != out.dim(0)) return false;
      // The same dims in another order is a transpose out of (or into) the conv layout.
      return in.dims() == out.dims() || !std::ranges::is_permutation(in.dims(), out.dims());
    }
    default:
      return false;
  }
}

}  // namespace

ChannelsMinorValues::ChannelsMinorValues(const Graph& g) {
  minor_.assign(g.values().size(), false);
  auto rank4 = [&](ValueId v) {
    return v != kNoValue && g.value(v).type.shape.rank_known() && g.value(v).type.shape.rank() == 4;
  };
  auto mark = [&](ValueId v) {
    const bool was = minor_[static_cast<std::size_t>(v)];
    minor_[static_cast<std::size_t>(v)] = any_ = true;
    return !was;
  };
  // Forward: convolution outputs, and what the ops that keep their layout make of them.
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    bool marked = false;
    if (n.kind == OpKind::kConv || n.kind == OpKind::kConvTranspose) {
      // ONNX-shaped convolutions (no XLA dim_labels) are NCHW.
      marked = !n.conv || n.conv->channels_second();
    } else {
      for (ValueId in : n.inputs) {
        if (!rank4(in) || !minor_[static_cast<std::size_t>(in)]) continue;
        for (ValueId out : n.outputs) {
          marked |=
              rank4(out) && KeepsConvLayout(n, g.value(in).type.shape, g.value(out).type.shape);
        }
      }
    }
    if (!marked) continue;
    for (ValueId out : n.outputs) {
      if (rank4(out)) mark(out);
    }
  }
  // Backward: an elementwise op's operands share its layout (XLA's layout assignment propagates
  // both ways), so a tensor joining the conv world (a ConvNeXt block's permute back to NCHW,
  // scaled, then added to the residual) is laid out channels-minor too, and so is a convolution's
  // data operand. Graph inputs and weights keep theirs.
  const auto& order = g.topo_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g.node(*it);
    // A convolution's data operand made by another op (a permute back to NCHW before a
    // downsampling conv) is written in the conv's layout.
    if ((n.kind == OpKind::kConv || n.kind == OpKind::kConvTranspose) && minor_.size() &&
        !n.outputs.empty() && rank4(n.outputs[0]) &&
        minor_[static_cast<std::size_t>(n.outputs[0])] && rank4(n.input(0)) &&
        g.value(n.input(0)).origin == ValueOrigin::kNodeOutput) {
      mark(n.input(0));
      continue;
    }
    if (n.kind != OpKind::kElementwise && n.kind != OpKind::kCast) continue;
    if (n.outputs.empty() || !rank4(n.outputs[0]) ||
        !minor_[static_cast<std::size_t>(n.outputs[0])])
      continue;
    const Shape& out = g.value(n.outputs[0]).type.shape;
    for (ValueId in : n.inputs) {
      if (rank4(in) && g.value(in).type.shape == out &&
          g.value(in).origin == ValueOrigin::kNodeOutput)
        mark(in);
    }
  }
}

std::optional<double> LayoutBytes(const TensorType& type, const TargetSpec& target,
                                  int element_bytes, bool channels_minor) {
  if (!target.tiling) return TensorBytes(type, element_bytes);
  if (type.kind != ValueKind::kTensor || !type.shape.is_static()) return std::nullopt;
  const auto& tl = *target.tiling;
  int bits = element_bytes > 0 && IsFloat(type.dtype) ? element_bytes * 8 : BitsOf(type.dtype);
  if (type.dtype == DType::kBool) bits = tl.pred_bytes * 8;
  if (bits == 0) return std::nullopt;
  std::vector<Dim> dims = type.shape.dims();
  if (channels_minor && dims.size() == 4) {
    dims = {dims[0], dims[2], dims[3], dims[1]};  // NCHW -> NHWC
  }
  // Size-1 dims hold no data and XLA's layout assignment keeps them out of the tiled minor dims.
  dims.erase(std::remove_if(dims.begin(), dims.end(),
                            [](const Dim& d) { return d.is_static() && d.value() == 1; }),
             dims.end());
  double elements = 1;
  if (dims.empty()) {
    elements = 1;
  } else if (dims.size() == 1) {
    elements = RoundUp(static_cast<double>(dims[0].value()), tl.rank1_elements);
  } else {
    for (std::size_t i = 0; i + 2 < dims.size(); ++i)
      elements *= static_cast<double>(dims[i].value());
    const double second = static_cast<double>(dims[dims.size() - 2].value());
    const double rows = tl.Rows(bits);
    const double padded_second = second <= 2   ? RoundUp(second, 2)
                                 : second <= 4 ? RoundUp(second, 4)
                                               : RoundUp(second, rows);
    elements *= padded_second * RoundUp(static_cast<double>(dims.back().value()), tl.minor);
  }
  return std::ceil(elements * bits / 8.0);
}

}  // namespace tpudoctor
