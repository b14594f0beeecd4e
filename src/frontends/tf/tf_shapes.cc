#include "src/frontends/tf/tf_shapes.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "src/frontends/tf/tf_attrs.h"
#include "tpudoctor/ir/shape_math.h"

namespace tpudoctor::tf_frontend {
namespace {

namespace tfp = tpudoctor::tf;
using Dims = std::vector<Dim>;

// The known integer contents of an input, all static.
std::optional<std::vector<std::int64_t>> Values(const Value* v) {
  return v == nullptr ? std::nullopt : v->StaticInts();
}

Dim Window(const Dim& in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
           const std::string& padding) {
  return WindowOutput(in, k, stride, dilation,
                      padding == "SAME" ? WindowPadding::kSame : WindowPadding::kValid);
}

std::optional<Shape> Conv(const tfp::NodeDef& n, const Shape& x, const Shape& w, bool depthwise) {
  if (!x.rank_known() || !w.rank_known() || x.rank() < 3 || w.rank() != x.rank())
    return std::nullopt;
  const bool cf = ChannelsFirst(n);
  const std::size_t sp = x.rank() - 2;
  auto strides = IntsAttr(n, "strides"), dil = IntsAttr(n, "dilations");
  const std::string padding = StringAttr(n, "padding", "VALID");
  Dims out = x.dims();
  for (std::size_t i = 0; i < sp; ++i) {
    const std::size_t axis = (cf ? 2 : 1) + i;
    const std::int64_t s = axis < strides.size() ? strides[axis] : 1;
    const std::int64_t d = axis < dil.size() ? dil[axis] : 1;
    const Dim k = w.dim(i);
    out[axis] = k.is_static() ? Window(x.dim(axis), k.value(), s, d, padding) : Dim::Unknown();
  }
  const std::size_t c = cf ? 1 : x.rank() - 1;
  if (depthwise) {
    const Dim mult = w.dim(sp + 1);
    out[c] = x.dim(c).is_static() && mult.is_static() ? Dim::Static(x.dim(c).value() * mult.value())
                                                      : Dim::Unknown();
  } else {
    out[c] = w.dim(sp + 1);
  }
  return Shape(out);
}

std::optional<Shape> Pool(const tfp::NodeDef& n, const Shape& x) {
  if (!x.rank_known() || x.rank() < 3) return std::nullopt;
  auto k = IntsAttr(n, "ksize"), s = IntsAttr(n, "strides");
  if (k.size() != x.rank() || s.size() != x.rank()) return std::nullopt;
  const std::string padding = StringAttr(n, "padding", "VALID");
  Dims out = x.dims();
  for (std::size_t i = 0; i < x.rank(); ++i) {
    if (k[i] != 1 || s[i] != 1) out[i] = Window(x.dim(i), k[i], s[i], 1, padding);
  }
  return Shape(out);
}

std::optional<Shape> Broadcast(const Shape& a, const Shape& b) {
  const Shape* both[] = {&a, &b};
  return BroadcastShapes(both);
}

std::optional<Shape> Reduce(const tfp::NodeDef& n, const Shape& x, const Value* axes_in) {
  auto axes = Values(axes_in);
  if (!x.rank_known() || !axes) return std::nullopt;
  const bool keep = BoolAttr(n, "keep_dims") || BoolAttr(n, "keepdims");
  std::set<std::int64_t> drop;
  for (std::int64_t a : *axes) drop.insert(a < 0 ? a + static_cast<std::int64_t>(x.rank()) : a);
  Dims out;
  for (std::size_t i = 0; i < x.rank(); ++i) {
    if (!drop.count(static_cast<std::int64_t>(i))) {
      out.push_back(x.dim(i));
    } else if (keep) {
      out.push_back(Dim::Static(1));
    }
  }
  return Shape(out);
}

std::optional<Shape> Reshape(const Shape& x, const Value* shape_in) {
  auto target = Values(shape_in);
  if (!target) return std::nullopt;
  Dims out;
  std::int64_t known = 1;
  int infer = -1;
  for (std::int64_t d : *target) {
    if (d < 0) {
      infer = static_cast<int>(out.size());
      out.push_back(Dim::Unknown());
    } else {
      out.push_back(Dim::Static(d));
      if (__builtin_mul_overflow(known, d, &known)) return std::nullopt;
    }
  }
  if (infer >= 0 && x.is_static() && known > 0) {
    std::int64_t total = 1;
    for (const Dim& d : x.dims()) {
      if (__builtin_mul_overflow(total, d.value(), &total)) return std::nullopt;
    }
    out[static_cast<std::size_t>(infer)] = Dim::Static(total / known);
  } else if (infer >= 0 && x.rank_known() && !x.dims().empty() && x.dim(0).is_symbol()) {
    out[static_cast<std::size_t>(infer)] = x.dim(0);  // the batch, flattened around
  }
  return Shape(out);
}

}  // namespace

std::optional<Shape> InferTfShape(const tfp::NodeDef& n, const std::vector<const Value*>& in) {
  auto shape = [&](std::size_t i) -> const Shape* {
    return i < in.size() && in[i] != nullptr ? &in[i]->type.shape : nullptr;
  };
  const std::string& op = n.op();
  const Shape* x = shape(0);
  if (x == nullptr) return std::nullopt;
  static const std::set<std::string> kSameShape = {"BiasAdd",
                                                   "Relu",
                                                   "Relu6",
                                                   "Elu",
                                                   "Selu",
                                                   "LeakyRelu",
                                                   "Sigmoid",
                                                   "Tanh",
                                                   "Softmax",
                                                   "LogSoftmax",
                                                   "Identity",
                                                   "StopGradient",
                                                   "Cast",
                                                   "Neg",
                                                   "Abs",
                                                   "Exp",
                                                   "Log",
                                                   "Sqrt",
                                                   "Rsqrt",
                                                   "Square",
                                                   "Softplus",
                                                   "FusedBatchNorm",
                                                   "FusedBatchNormV2",
                                                   "FusedBatchNormV3",
                                                   "LRN",
                                                   "Erf",
                                                   "Floor",
                                                   "Round",
                                                   "Reciprocal",
                                                   "Sign",
                                                   "ClipByValue",
                                                   "Snapshot",
                                                   "ZerosLike",
                                                   "OnesLike",
                                                   "Gelu",
                                                   "PreventGradient",
                                                   "CheckNumerics",
                                                   "Dropout"};
  static const std::set<std::string> kBinary = {
      "Add",       "AddV2",    "Sub",          "Mul",        "RealDiv",
      "Div",       "Maximum",  "Minimum",      "Pow",        "SquaredDifference",
      "FloorDiv",  "FloorMod", "Equal",        "NotEqual",   "Less",
      "LessEqual", "Greater",  "GreaterEqual", "LogicalAnd", "LogicalOr",
      "DivNoNan"};
  if (kSameShape.count(op)) return *x;
  if (kBinary.count(op) && shape(1) != nullptr) return Broadcast(*x, *shape(1));
  if (op == "AddN") return *x;
  if ((op == "Conv2D" || op == "Conv3D") && shape(1)) return Conv(n, *x, *shape(1), false);
  if (op == "DepthwiseConv2dNative" && shape(1)) return Conv(n, *x, *shape(1), true);
  if (op == "MaxPool" || op == "AvgPool" || op == "MaxPool3D" || op == "AvgPool3D")
    return Pool(n, *x);
  if (op == "MatMul" && shape(1) && x->rank() == 2 && shape(1)->rank() == 2) {
    const Shape& w = *shape(1);
    return Shape(Dims{BoolAttr(n, "transpose_a") ? x->dim(1) : x->dim(0),
                      BoolAttr(n, "transpose_b") ? w.dim(0) : w.dim(1)});
  }
  if (op.rfind("BatchMatMul", 0) == 0 && shape(1) && x->rank() >= 2 &&
      shape(1)->rank() == x->rank()) {
    Dims out = x->dims();
    const Shape& y = *shape(1);
    out[x->rank() - 2] = BoolAttr(n, "adj_x") ? x->dim(x->rank() - 1) : x->dim(x->rank() - 2);
    out[x->rank() - 1] = BoolAttr(n, "adj_y") ? y.dim(y.rank() - 2) : y.dim(y.rank() - 1);
    return Shape(out);
  }
  if (op == "Mean" || op == "Sum" || op == "Max" || op == "Min" || op == "Prod" || op == "All" ||
      op == "Any") {
    return Reduce(n, *x, in.size() > 1 ? in[1] : nullptr);
  }
  if ((op == "ArgMax" || op == "ArgMin") && x->rank_known()) {
    auto axis = Values(in.size() > 1 ? in[1] : nullptr);
    if (!axis || axis->size() != 1) return std::nullopt;
    Dims out = x->dims();
    const std::int64_t a =
        (*axis)[0] < 0 ? (*axis)[0] + static_cast<std::int64_t>(x->rank()) : (*axis)[0];
    if (a < 0 || a >= static_cast<std::int64_t>(out.size())) return std::nullopt;
    out.erase(out.begin() + a);
    return Shape(out);
  }
  if (op == "Reshape") return Reshape(*x, in.size() > 1 ? in[1] : nullptr);
  if (op == "Squeeze" && x->rank_known()) {
    auto dims = IntsAttr(n, "squeeze_dims");
    Dims out;
    for (std::size_t i = 0; i < x->rank(); ++i) {
      const bool listed =
          std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(i)) != dims.end() ||
          std::find(dims.begin(), dims.end(),
                    static_cast<std::int64_t>(i) - static_cast<std::int64_t>(x->rank())) !=
              dims.end();
      const bool one = x->dim(i).is_static() && x->dim(i).value() == 1;
      if (!(one && (dims.empty() || listed))) out.push_back(x->dim(i));
    }
    return Shape(out);
  }
  if (op == "ExpandDims" && x->rank_known()) {
    auto axis = Values(in.size() > 1 ? in[1] : nullptr);
    if (!axis || axis->size() != 1) return std::nullopt;
    Dims out = x->dims();
    std::int64_t a = (*axis)[0];
    if (a < 0) a += static_cast<std::int64_t>(out.size()) + 1;
    if (a < 0 || a > static_cast<std::int64_t>(out.size())) return std::nullopt;
    out.insert(out.begin() + a, Dim::Static(1));
    return Shape(out);
  }
  if (op == "Transpose" && x->rank_known()) {
    auto perm = Values(in.size() > 1 ? in[1] : nullptr);
    if (!perm || perm->size() != x->rank()) return std::nullopt;
    Dims out;
    for (std::int64_t p : *perm) {
      if (p < 0 || p >= static_cast<std::int64_t>(x->rank())) return std::nullopt;
      out.push_back(x->dim(static_cast<std::size_t>(p)));
    }
    return Shape(out);
  }
  if (op == "ConcatV2" && in.size() >= 2 && x->rank_known()) {
    auto axis = Values(in.back());
    if (!axis || axis->size() != 1) return std::nullopt;
    std::int64_t a =
        (*axis)[0] < 0 ? (*axis)[0] + static_cast<std::int64_t>(x->rank()) : (*axis)[0];
    if (a < 0 || a >= static_cast<std::int64_t>(x->rank())) return std::nullopt;
    Dims out = x->dims();
    std::int64_t total = 0;
    for (std::size_t i = 0; i + 1 < in.size(); ++i) {
      const Shape* s = shape(i);
      if (s == nullptr || s->rank() != x->rank() ||
          !s->dim(static_cast<std::size_t>(a)).is_static())
        return std::nullopt;
      total += s->dim(static_cast<std::size_t>(a)).value();
    }
    out[static_cast<std::size_t>(a)] = Dim::Static(total);
    return Shape(out);
  }
  if (op == "Pad" || op == "PadV2" || op == "MirrorPad") {
    auto pads = Values(in.size() > 1 ? in[1] : nullptr);
    if (!pads || !x->rank_known() || pads->size() != 2 * x->rank()) return std::nullopt;
    Dims out = x->dims();
    for (std::size_t i = 0; i < x->rank(); ++i) {
      if (out[i].is_static())
        out[i] = Dim::Static(out[i].value() + (*pads)[2 * i] + (*pads)[2 * i + 1]);
    }
    return Shape(out);
  }
  if ((op == "Shape") && x->rank_known())
    return Shape(Dims{Dim::Static(static_cast<std::int64_t>(x->rank()))});
  return std::nullopt;
}

}  // namespace tpudoctor::tf_frontend
