#include "src/frontends/onnx/shape_infer.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "tpudoctor/ir/shape_math.h"

namespace tpudoctor::onnx_frontend {
namespace {

using Dims = std::vector<Dim>;
constexpr std::size_t kMaxKnownInts = 4096;

// ---- Products of dims (the Dim arithmetic itself is tpudoctor/ir/shape_math.h) ----

// Product of dims as (static factor, symbols); nullopt when a dim is unknown or it overflows.
struct Product {
  std::int64_t factor = 1;
  std::multiset<std::string> symbols;
};

std::optional<Product> ProductOf(const Dims& dims) {
  Product p;
  for (const Dim& d : dims) {
    if (d.is_unknown()) return std::nullopt;
    if (d.is_symbol()) {
      p.symbols.insert(d.symbol());
      continue;
    }
    auto v = CheckedMul(p.factor, d.value());
    if (!v) return std::nullopt;
    p.factor = *v;
  }
  return p;
}

// total / part, when the result is a single static number or a single symbol.
Dim Quotient(const Product& total, const Product& part) {
  if (part.factor == 0 || total.factor % part.factor != 0) return Dim::Unknown();
  std::multiset<std::string> left = total.symbols;
  for (const std::string& s : part.symbols) {
    auto it = left.find(s);
    if (it == left.end()) return Dim::Unknown();
    left.erase(it);
  }
  const std::int64_t factor = total.factor / part.factor;
  if (left.empty()) return Dim::Static(factor);
  if (left.size() == 1 && factor == 1) return Dim::Symbol(*left.begin());
  return Dim::Unknown();
}

// ---- The propagator ----

class Propagator {
 public:
  Propagator(Graph& g, std::optional<std::int64_t> rebatch) : g_(g), rebatch_(rebatch) {}

  void Run() {
    for (NodeId id : g_.topo_order()) {
      const Node& n = g_.node(id);
      if (n.outputs.empty()) continue;
      auto it = Table().find(n.op_type);
      if (n.domain.empty() || n.domain == "ai.onnx") {
        if (it != Table().end()) it->second(*this, n);
      }
    }
  }

  // Accessors.
  const TensorType& T(const Node& n, std::size_t i) const {
    static const TensorType kNone{ValueKind::kUnknown, DType::kUnknown, Shape()};
    ValueId v = n.input(i);
    return v == kNoValue ? kNone : g_.value(v).type;
  }
  const Shape& S(const Node& n, std::size_t i) const { return T(n, i).shape; }
  const Boxed<Dims>& K(const Node& n, std::size_t i) const {
    static const Boxed<Dims> kNone;
    ValueId v = n.input(i);
    return v == kNoValue ? kNone : g_.value(v).known_ints;
  }
  // Known ints that are all static.
  std::optional<std::vector<std::int64_t>> StaticInts(const Node& n, std::size_t i) const {
    const auto& k = K(n, i);
    if (!k) return std::nullopt;
    std::vector<std::int64_t> out;
    for (const Dim& d : *k) {
      if (!d.is_static()) return std::nullopt;
      out.push_back(d.value());
    }
    return out;
  }
  // An int-list parameter that is an attribute in old opsets and an input in new ones.
  std::optional<std::vector<std::int64_t>> AttrOrInput(const Node& n, std::string_view attr,
                                                       std::size_t input) const {
    if (auto a = n.IntsAttr(attr)) return a;
    if (n.input(input) == kNoValue) return std::nullopt;
    return StaticInts(n, input);
  }

  // Merges what was inferred into output `i`; never makes a known fact less specific.
  void Set(const Node& n, std::size_t i, DType dtype, const std::optional<Shape>& shape) {
    if (i >= n.outputs.size()) return;
    Value& v = g_.mutable_value(n.outputs[i]);
    if (v.type.kind == ValueKind::kUnknown) v.type.kind = ValueKind::kTensor;
    if (v.type.dtype == DType::kUnknown) v.type.dtype = dtype;
    if (!shape || !shape->rank_known()) return;
    if (!v.type.shape.rank_known()) {
      v.type.shape = *shape;
      return;
    }
    if (v.type.shape.rank() != shape->rank()) return;  // disagreement: keep the exporter's word
    for (std::size_t d = 0; d < shape->rank(); ++d) {
      Dim& have = v.type.shape.mutable_dims()[d];
      const Dim& got = shape->dim(d);
      if (have.is_static()) continue;
      if (got.is_static() || (have.is_unknown() && got.is_symbol())) have = got;
    }
  }
  void SetLike(const Node& n, std::size_t out, std::size_t in) {
    Set(n, out, T(n, in).dtype, S(n, in));
  }
  void SetKnown(const Node& n, std::size_t i, Dims ints) {
    if (i >= n.outputs.size() || ints.size() > kMaxKnownInts) return;
    Value& v = g_.mutable_value(n.outputs[i]);
    if (!v.known_ints) v.known_ints = std::move(ints);
  }

  using Fn = std::function<void(Propagator&, const Node&)>;
  static const std::map<std::string, Fn, std::less<>>& Table();

  Graph& g_;
  // Set when --batch replaced a static leading 1: the new batch, used to repair reshape targets
  // that the exporter baked for batch 1.
  std::optional<std::int64_t> rebatch_;
};

// ---- Shape functions, one per op family ----

void SameAsInput(Propagator& p, const Node& n) {
  p.SetLike(n, 0, 0);
  if (n.op_type == "Identity" && p.K(n, 0)) p.SetKnown(n, 0, *p.K(n, 0));
}

void Cast(Propagator& p, const Node& n) {
  // The `to` dtype was resolved by the loader into the output type when known; keep the shape.
  p.Set(n, 0, DType::kUnknown, p.S(n, 0));
  if (p.K(n, 0)) {
    const DType to = p.g_.value(n.outputs[0]).type.dtype;
    if (to == DType::kInt64 || to == DType::kInt32) p.SetKnown(n, 0, *p.K(n, 0));
  }
}

void ElementwiseBroadcast(Propagator& p, const Node& n, DType out_dtype) {
  std::vector<const Shape*> shapes;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.input(i) != kNoValue) shapes.push_back(&p.S(n, i));
  }
  p.Set(n, 0, out_dtype, BroadcastShapes(shapes));
}

// Folds integer arithmetic on known ints (element-wise with broadcasting of scalars).
void FoldBinary(Propagator& p, const Node& n, const std::function<Dim(const Dim&, const Dim&)>& f) {
  const auto& a = p.K(n, 0);
  const auto& b = p.K(n, 1);
  if (!a || !b) return;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return;
  const std::size_t len = std::max(a->size(), b->size());
  Dims out;
  for (std::size_t i = 0; i < len; ++i) {
    out.push_back(f((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]));
  }
  p.SetKnown(n, 0, std::move(out));
}

void Arithmetic(Propagator& p, const Node& n) {
  ElementwiseBroadcast(p, n, p.T(n, 0).dtype);
  const std::string_view op = n.op_type;
  if (op == "Add") FoldBinary(p, n, AddDims);
  if (op == "Sub")
    FoldBinary(p, n, [](const Dim& a, const Dim& b) { return AddDims(a, NegDim(b)); });
  if (op == "Mul") FoldBinary(p, n, MulDims);
  if (op == "Div") FoldBinary(p, n, FloorDivDims);
  if (op == "Mod") {
    FoldBinary(p, n, [](const Dim& a, const Dim& b) {
      if (!a.is_static() || !b.is_static() || b.value() == 0 ||
          (a.value() == std::numeric_limits<std::int64_t>::min() && b.value() == -1)) {
        return Dim::Unknown();
      }
      std::int64_t r = a.value() % b.value();
      if (r != 0 && ((r < 0) != (b.value() < 0))) r += b.value();  // fmod=0: sign of the divisor
      return Dim::Static(r);
    });
  }
  auto pick = [&](bool want_max) {
    return [want_max](const Dim& a, const Dim& b) {
      if (!a.is_static() || !b.is_static()) return a == b ? a : Dim::Unknown();
      return Dim::Static(want_max ? std::max(a.value(), b.value())
                                  : std::min(a.value(), b.value()));
    };
  };
  if (op == "Max" && n.inputs.size() == 2) FoldBinary(p, n, pick(true));
  if (op == "Min" && n.inputs.size() == 2) FoldBinary(p, n, pick(false));
}

void Compare(Propagator& p, const Node& n) {
  ElementwiseBroadcast(p, n, DType::kBool);
  if (n.op_type == "Equal") {
    FoldBinary(p, n, [](const Dim& a, const Dim& b) {
      if (a.is_static() && b.is_static()) return Dim::Static(a.value() == b.value() ? 1 : 0);
      if (a == b && a.is_symbol()) return Dim::Static(1);
      return Dim::Unknown();
    });
  }
}

void WhereOp(Propagator& p, const Node& n) {
  std::vector<const Shape*> shapes = {&p.S(n, 0), &p.S(n, 1), &p.S(n, 2)};
  p.Set(n, 0, p.T(n, 1).dtype, BroadcastShapes(shapes));
  const auto& c = p.K(n, 0);
  const auto& x = p.K(n, 1);
  const auto& y = p.K(n, 2);
  if (!c || !x || !y) return;
  const std::size_t len = std::max({c->size(), x->size(), y->size()});
  auto at = [len](const Dims& d, std::size_t i) -> const Dim* {
    if (d.size() == 1) return &d[0];
    return d.size() == len ? &d[i] : nullptr;
  };
  Dims out;
  for (std::size_t i = 0; i < len; ++i) {
    const Dim* ci = at(*c, i);
    const Dim* xi = at(*x, i);
    const Dim* yi = at(*y, i);
    if (!ci || !xi || !yi || !ci->is_static()) return;
    out.push_back(ci->value() != 0 ? *xi : *yi);
  }
  p.SetKnown(n, 0, std::move(out));
}

void MatMulOp(Propagator& p, const Node& n) {
  const Shape& a = p.S(n, 0);
  const Shape& b = p.S(n, 1);
  if (!a.rank_known() || !b.rank_known() || a.rank() == 0 || b.rank() == 0) {
    p.Set(n, 0, p.T(n, 0).dtype, std::nullopt);
    return;
  }
  Dims ad = a.dims();
  Dims bd = b.dims();
  const bool a_vec = ad.size() == 1;
  const bool b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), Dim::Static(1));
  if (b_vec) bd.push_back(Dim::Static(1));
  Shape a_batch(Dims(ad.begin(), ad.end() - 2));
  Shape b_batch(Dims(bd.begin(), bd.end() - 2));
  auto batch = BroadcastShapes(std::vector<const Shape*>{&a_batch, &b_batch});
  Dims out = batch ? batch->dims() : Dims{};
  if (!a_vec) out.push_back(ad[ad.size() - 2]);
  if (!b_vec) out.push_back(bd.back());
  const DType dt = n.op_type == "MatMulInteger" ? DType::kInt32 : p.T(n, 0).dtype;
  p.Set(n, 0, dt, Shape(std::move(out)));
}

void GemmOp(Propagator& p, const Node& n) {
  const Shape& a = p.S(n, 0);
  const Shape& b = p.S(n, 1);
  if (!a.rank_known() || !b.rank_known() || a.rank() != 2 || b.rank() != 2) return;
  const bool ta = n.IntAttr("transA").value_or(0) != 0;
  const bool tb = n.IntAttr("transB").value_or(0) != 0;
  p.Set(n, 0, p.T(n, 0).dtype, Shape(Dims{a.dim(ta ? 1 : 0), b.dim(tb ? 0 : 1)}));
}

std::optional<Dims> SpatialOut(const Node& n, const Shape& x,
                               const std::vector<std::int64_t>& kernel) {
  if (!x.rank_known() || x.rank() < 2 + kernel.size()) return std::nullopt;
  const std::size_t sp = kernel.size();
  auto strides = n.IntsAttr("strides").value_or(std::vector<std::int64_t>(sp, 1));
  auto dilations = n.IntsAttr("dilations").value_or(std::vector<std::int64_t>(sp, 1));
  auto pads = n.IntsAttr("pads").value_or(std::vector<std::int64_t>(2 * sp, 0));
  const std::string auto_pad = n.StringAttr("auto_pad").value_or("NOTSET");
  const WindowPadding padding = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"
                                    ? WindowPadding::kSame
                                : auto_pad == "VALID" ? WindowPadding::kValid
                                                      : WindowPadding::kExplicit;
  const bool ceil_mode = n.IntAttr("ceil_mode").value_or(0) != 0;
  if (strides.size() != sp || dilations.size() != sp || pads.size() != 2 * sp) return std::nullopt;
  Dims out;
  for (std::size_t i = 0; i < sp; ++i) {
    out.push_back(WindowOutput(x.dim(2 + i), kernel[i], strides[i], dilations[i], padding,
                               pads[i] + pads[i + sp], ceil_mode));
  }
  return out;
}

void ConvOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  const Shape& w = p.S(n, 1);
  if (!x.rank_known() || !w.rank_known() || w.rank() < 3) return;
  std::vector<std::int64_t> kernel;
  if (auto k = n.IntsAttr("kernel_shape")) {
    kernel = *k;
  } else {
    for (std::size_t i = 2; i < w.rank(); ++i) {
      if (!w.dim(i).is_static()) return;
      kernel.push_back(w.dim(i).value());
    }
  }
  auto spatial = SpatialOut(n, x, kernel);
  if (!spatial) return;
  Dims out = {x.dim(0), w.dim(0)};
  out.insert(out.end(), spatial->begin(), spatial->end());
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void ConvTransposeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  const Shape& w = p.S(n, 1);
  if (!x.rank_known() || !w.rank_known() || w.rank() < 3 || x.rank() != w.rank()) return;
  const std::size_t sp = w.rank() - 2;
  const std::int64_t group = n.IntAttr("group").value_or(1);
  Dims out = {x.dim(0), MulDims(w.dim(1), Dim::Static(group))};
  if (auto os = n.IntsAttr("output_shape"); os && os->size() == sp) {
    for (std::int64_t v : *os) out.push_back(Dim::Static(v));
    p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
    return;
  }
  auto strides = n.IntsAttr("strides").value_or(std::vector<std::int64_t>(sp, 1));
  auto dilations = n.IntsAttr("dilations").value_or(std::vector<std::int64_t>(sp, 1));
  auto pads = n.IntsAttr("pads").value_or(std::vector<std::int64_t>(2 * sp, 0));
  auto out_pad = n.IntsAttr("output_padding").value_or(std::vector<std::int64_t>(sp, 0));
  if (strides.size() != sp || dilations.size() != sp || pads.size() != 2 * sp ||
      out_pad.size() != sp)
    return;
  for (std::size_t i = 0; i < sp; ++i) {
    const Dim& in = x.dim(2 + i);
    const Dim& k = w.dim(2 + i);
    if (!in.is_static() || !k.is_static()) {
      out.push_back(Dim::Unknown());
      continue;
    }
    out.push_back(Dim::Static(strides[i] * (in.value() - 1) + out_pad[i] +
                              (k.value() - 1) * dilations[i] + 1 - pads[i] - pads[i + sp]));
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void PoolOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  auto kernel = n.IntsAttr("kernel_shape");
  if (!kernel || !x.rank_known()) return;
  auto spatial = SpatialOut(n, x, *kernel);
  if (!spatial) return;
  Dims out = {x.dim(0), x.dim(1)};
  out.insert(out.end(), spatial->begin(), spatial->end());
  p.Set(n, 0, p.T(n, 0).dtype, Shape(out));
  if (n.outputs.size() > 1) p.Set(n, 1, DType::kInt64, Shape(out));
}

void GlobalPoolOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known() || x.rank() < 2) return;
  Dims out = {x.dim(0), x.dim(1)};
  out.resize(x.rank(), Dim::Static(1));
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void FlattenOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  auto axis = NormalizeAxis(n.IntAttr("axis").value_or(1), x.rank() + 1);
  if (!axis) return;
  Dim left = Dim::Static(1);
  Dim right = Dim::Static(1);
  for (std::size_t i = 0; i < x.rank(); ++i)
    (i < *axis ? left : right) = MulDims(i < *axis ? left : right, x.dim(i));
  p.Set(n, 0, p.T(n, 0).dtype, Shape(Dims{left, right}));
}

void ReshapeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  const auto& target = p.K(n, 1);
  if (!target) {
    const Shape& ts = p.S(n, 1);
    if (ts.rank_known() && ts.rank() == 1 && ts.dim(0).is_static()) {
      p.Set(n, 0, p.T(n, 0).dtype,
            Shape(Dims(static_cast<std::size_t>(ts.dim(0).value()), Dim::Unknown())));
    }
    return;
  }
  const bool allow_zero = n.IntAttr("allowzero").value_or(0) != 0;
  Dims out;
  std::optional<std::size_t> infer_at;
  for (std::size_t i = 0; i < target->size(); ++i) {
    const Dim& d = (*target)[i];
    if (d.is_static() && d.value() == -1) {
      infer_at = i;
      out.push_back(Dim::Unknown());
    } else if (d.is_static() && d.value() == 0 && !allow_zero) {
      out.push_back(x.rank_known() && i < x.rank() ? x.dim(i) : Dim::Unknown());
    } else if (d.is_static() && d.value() < 0) {
      out.push_back(Dim::Unknown());
    } else {
      out.push_back(d);
    }
  }
  if (p.rebatch_ && !out.empty() && out[0].is_static() && out[0].value() == 1 && x.rank_known() &&
      x.rank() > 0 && x.dim(0).is_static() && x.dim(0).value() == *p.rebatch_) {
    // A target baked for batch 1 ([1,256,12,64]) applied to a tensor that now leads with the new
    // batch: the leading 1 was the batch.
    out[0] = Dim::Static(*p.rebatch_);
  }
  if (p.rebatch_ && !infer_at && !out.empty() && out[0].is_static() && out[0].value() == 1 &&
      x.rank_known()) {
    // Same, for a flattened input ([1024,2304] → [1,256,2304]): the element counts disagree by
    // exactly the new batch.
    auto total = ProductOf(x.dims());
    auto part = ProductOf(out);
    if (total && part && total->symbols.empty() && part->symbols.empty() &&
        total->factor == part->factor * *p.rebatch_) {
      out[0] = Dim::Static(*p.rebatch_);
    }
  }
  if (infer_at && x.rank_known()) {
    Dims others = out;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(*infer_at));
    auto total = ProductOf(x.dims());
    auto part = ProductOf(others);
    if (total && part) out[*infer_at] = Quotient(*total, *part);
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(out));
  if (p.K(n, 0)) p.SetKnown(n, 0, *p.K(n, 0));
}

// Known ints of an N-D static tensor rearranged: output element `o` (row-major over `out`) takes
// input element `source(index of o)`. Used to fold Slice and Transpose of small shape tensors
// (torch's F.pad exports its pads as a reversed, transposed slice of a constant).
std::optional<Dims> RearrangeKnown(
    const Dims& known, const Shape& in, const Dims& out,
    const std::function<std::optional<std::vector<std::int64_t>>(const std::vector<std::int64_t>&)>&
        source) {
  std::vector<std::int64_t> in_dims, out_dims;
  for (const Dim& d : in.dims()) {
    if (!d.is_static()) return std::nullopt;
    in_dims.push_back(d.value());
  }
  std::int64_t in_count = 1, out_count = 1;
  for (std::int64_t d : in_dims) in_count *= d;
  for (const Dim& d : out) {
    if (!d.is_static()) return std::nullopt;
    out_dims.push_back(d.value());
    out_count *= d.value();
  }
  if (in_count != static_cast<std::int64_t>(known.size()) ||
      out_count > static_cast<std::int64_t>(kMaxKnownInts))
    return std::nullopt;
  Dims folded;
  std::vector<std::int64_t> index(out_dims.size(), 0);
  for (std::int64_t o = 0; o < out_count; ++o) {
    auto from = source(index);
    if (!from || from->size() != in_dims.size()) return std::nullopt;
    std::int64_t flat = 0;
    for (std::size_t a = 0; a < in_dims.size(); ++a) {
      if ((*from)[a] < 0 || (*from)[a] >= in_dims[a]) return std::nullopt;
      flat = flat * in_dims[a] + (*from)[a];
    }
    folded.push_back(known[static_cast<std::size_t>(flat)]);
    for (std::size_t a = out_dims.size(); a-- > 0;) {  // next row-major index
      if (++index[a] < out_dims[a]) break;
      index[a] = 0;
    }
  }
  return folded;
}

void TransposeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  std::vector<std::int64_t> perm;
  if (auto a = n.IntsAttr("perm")) {
    perm = *a;
  } else {
    for (std::size_t i = x.rank(); i > 0; --i) perm.push_back(static_cast<std::int64_t>(i - 1));
  }
  if (perm.size() != x.rank()) return;
  Dims out;
  for (std::int64_t a : perm) {
    auto ax = NormalizeAxis(a, x.rank());
    if (!ax) return;
    out.push_back(x.dim(*ax));
  }
  if (const auto& k = p.K(n, 0)) {
    auto folded = RearrangeKnown(*k, x, out, [&](const std::vector<std::int64_t>& o) {
      std::vector<std::int64_t> from(o.size());
      for (std::size_t a = 0; a < o.size(); ++a)
        from[static_cast<std::size_t>(*NormalizeAxis(perm[a], x.rank()))] = o[a];
      return std::optional(from);
    });
    if (folded) p.SetKnown(n, 0, std::move(*folded));
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void SqueezeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  auto axes = p.AttrOrInput(n, "axes", 1);
  const bool has_axes_input = n.input(1) != kNoValue || n.FindAttr("axes") != nullptr;
  if (has_axes_input && !axes) return;
  std::vector<bool> drop(x.rank(), false);
  if (axes) {
    for (std::int64_t a : *axes) {
      auto ax = NormalizeAxis(a, x.rank());
      if (!ax) return;
      drop[*ax] = true;
    }
  } else {
    for (std::size_t i = 0; i < x.rank(); ++i) {
      if (!x.dim(i).is_static()) return;  // cannot tell which dims are 1
      drop[i] = x.dim(i).value() == 1;
    }
  }
  Dims out;
  for (std::size_t i = 0; i < x.rank(); ++i) {
    if (!drop[i]) out.push_back(x.dim(i));
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
  if (p.K(n, 0)) p.SetKnown(n, 0, *p.K(n, 0));
}

void UnsqueezeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  auto axes = p.AttrOrInput(n, "axes", 1);
  if (!x.rank_known() || !axes) return;
  const std::size_t rank = x.rank() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (std::int64_t a : *axes) {
    auto ax = NormalizeAxis(a, rank);
    if (!ax) return;
    inserted[*ax] = true;
  }
  Dims out;
  std::size_t src = 0;
  for (std::size_t i = 0; i < rank; ++i) {
    if (inserted[i]) {
      out.push_back(Dim::Static(1));
    } else if (src < x.rank()) {
      out.push_back(x.dim(src++));
    }
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
  if (p.K(n, 0)) p.SetKnown(n, 0, *p.K(n, 0));
}

void ConcatOp(Propagator& p, const Node& n) {
  const Shape& first = p.S(n, 0);
  if (!first.rank_known()) return;
  auto axis = NormalizeAxis(n.IntAttr("axis").value_or(0), first.rank());
  if (!axis) return;
  Dims out = first.dims();
  Dims known;
  bool all_known = true;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const Shape& s = p.S(n, i);
    if (!s.rank_known() || s.rank() != first.rank()) return;
    if (i > 0) out[*axis] = AddDims(out[*axis], s.dim(*axis));
    for (std::size_t d = 0; d < s.rank(); ++d) {
      if (d != *axis) out[d] = BroadcastDim(out[d], s.dim(d));
    }
    if (p.K(n, i)) {
      known.insert(known.end(), p.K(n, i)->begin(), p.K(n, i)->end());
    } else {
      all_known = false;
    }
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
  if (all_known && first.rank() == 1) p.SetKnown(n, 0, std::move(known));
}

void SplitOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  auto axis = NormalizeAxis(n.IntAttr("axis").value_or(0), x.rank());
  if (!axis) return;
  auto split = p.AttrOrInput(n, "split", 1);
  const std::size_t parts = n.outputs.size();
  for (std::size_t i = 0; i < parts; ++i) {
    Dims out = x.dims();
    if (split && split->size() == parts) {
      out[*axis] = Dim::Static((*split)[i]);
    } else if (x.dim(*axis).is_static() && parts > 0 &&
               x.dim(*axis).value() % static_cast<std::int64_t>(parts) == 0) {
      out[*axis] = Dim::Static(x.dim(*axis).value() / static_cast<std::int64_t>(parts));
    } else {
      out[*axis] = Dim::Unknown();
    }
    p.Set(n, i, p.T(n, 0).dtype, Shape(std::move(out)));
  }
}

// Clamps a Slice bound per the ONNX spec.
// ONNX Slice bounds: negative values count from the end; a start is clamped to [0, dim] (to
// [0, dim-1] stepping backwards), an end to [0, dim] (to [-1, dim-1] stepping backwards, so a
// backward slice can include element 0).
std::int64_t ClampBound(std::int64_t v, std::int64_t dim, bool positive_step, bool is_end) {
  const std::int64_t low = !positive_step && is_end ? -1 : 0;
  if (v < 0) v = v < -dim ? low : std::max(v + dim, low);
  if (positive_step) return std::min(v, dim);
  return std::min(v, dim - 1);
}

void SliceOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  std::optional<std::vector<std::int64_t>> starts = p.AttrOrInput(n, "starts", 1);
  std::optional<std::vector<std::int64_t>> ends = p.AttrOrInput(n, "ends", 2);
  std::optional<std::vector<std::int64_t>> axes = p.AttrOrInput(n, "axes", 3);
  std::optional<std::vector<std::int64_t>> steps =
      n.input(4) == kNoValue ? std::nullopt : p.StaticInts(n, 4);
  const bool has_axes = n.input(3) != kNoValue || n.FindAttr("axes") != nullptr;
  if (!starts || !ends || starts->size() != ends->size() || (has_axes && !axes) ||
      (n.input(4) != kNoValue && !steps)) {
    // Which dims change is unknown; the rank is not.
    if (!has_axes || axes) {
      Dims out = x.dims();
      std::vector<std::int64_t> ax = axes.value_or(std::vector<std::int64_t>{});
      if (!axes) {
        for (std::size_t i = 0; i < (starts ? starts->size() : x.rank()); ++i)
          ax.push_back(static_cast<std::int64_t>(i));
      }
      for (std::int64_t a : ax) {
        if (auto i = NormalizeAxis(a, x.rank())) out[*i] = Dim::Unknown();
      }
      p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
    }
    return;
  }
  if (!axes) {
    axes.emplace();
    for (std::size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<std::int64_t>(i));
  }
  if (!steps) steps = std::vector<std::int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) return;
  Dims out = x.dims();
  for (std::size_t i = 0; i < axes->size(); ++i) {
    auto ax = NormalizeAxis((*axes)[i], x.rank());
    const std::int64_t step = (*steps)[i];
    if (!ax || step == 0) return;
    const Dim& d = x.dim(*ax);
    if (!d.is_static()) {
      const bool whole =
          (*starts)[i] == 0 && step == 1 && (*ends)[i] >= std::numeric_limits<std::int32_t>::max();
      out[*ax] = whole ? d : Dim::Unknown();
      continue;
    }
    const std::int64_t start = ClampBound((*starts)[i], d.value(), step > 0, false);
    const std::int64_t end = ClampBound((*ends)[i], d.value(), step > 0, true);
    std::int64_t len = 0;
    if (step > 0 && end > start) len = (end - start + step - 1) / step;
    if (step < 0 && start > end) len = (start - end + (-step) - 1) / (-step);
    out[*ax] = Dim::Static(len);
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(out));
  // Fold a slice of a small known int tensor (any rank, any step).
  const auto& k = p.K(n, 0);
  if (!k) return;
  std::vector<std::int64_t> first(x.rank(), 0), stride(x.rank(), 1);
  for (std::size_t i = 0; i < axes->size(); ++i) {
    const std::size_t ax = *NormalizeAxis((*axes)[i], x.rank());
    if (!x.dim(ax).is_static()) return;
    first[ax] = ClampBound((*starts)[i], x.dim(ax).value(), (*steps)[i] > 0, false);
    stride[ax] = (*steps)[i];
  }
  auto folded = RearrangeKnown(*k, x, out, [&](const std::vector<std::int64_t>& o) {
    std::vector<std::int64_t> from(o.size());
    for (std::size_t a = 0; a < o.size(); ++a) from[a] = first[a] + o[a] * stride[a];
    return std::optional(from);
  });
  if (folded) p.SetKnown(n, 0, std::move(*folded));
}

void GatherOp(Propagator& p, const Node& n) {
  const Shape& data = p.S(n, 0);
  const Shape& idx = p.S(n, 1);
  if (!data.rank_known() || !idx.rank_known() || data.rank() == 0) return;
  auto axis = NormalizeAxis(n.IntAttr("axis").value_or(0), data.rank());
  if (!axis) return;
  Dims out(data.dims().begin(), data.dims().begin() + static_cast<std::ptrdiff_t>(*axis));
  out.insert(out.end(), idx.dims().begin(), idx.dims().end());
  out.insert(out.end(), data.dims().begin() + static_cast<std::ptrdiff_t>(*axis) + 1,
             data.dims().end());
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
  const auto& k = p.K(n, 0);
  auto indices = p.StaticInts(n, 1);
  if (k && indices && data.rank() == 1 && *axis == 0) {
    Dims folded;
    for (std::int64_t i : *indices) {
      auto pos = NormalizeAxis(i, k->size());
      if (!pos) return;
      folded.push_back((*k)[*pos]);
    }
    p.SetKnown(n, 0, std::move(folded));
  }
}

void GatherElementsOp(Propagator& p, const Node& n) { p.Set(n, 0, p.T(n, 0).dtype, p.S(n, 1)); }

void GatherNDOp(Propagator& p, const Node& n) {
  const Shape& data = p.S(n, 0);
  const Shape& idx = p.S(n, 1);
  if (!data.rank_known() || !idx.rank_known() || idx.rank() == 0 || !idx.dims().back().is_static())
    return;
  const auto b = static_cast<std::size_t>(n.IntAttr("batch_dims").value_or(0));
  const auto last = static_cast<std::size_t>(idx.dims().back().value());
  if (b + last > data.rank()) return;
  Dims out(idx.dims().begin(), idx.dims().end() - 1);
  out.insert(out.end(), data.dims().begin() + static_cast<std::ptrdiff_t>(b + last),
             data.dims().end());
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void ShapeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) {
    p.Set(n, 0, DType::kInt64, Shape(Dims{Dim::Unknown()}));
    return;
  }
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::int64_t start = n.IntAttr("start").value_or(0);
  std::int64_t end = n.IntAttr("end").value_or(rank);
  start = std::clamp(start < 0 ? start + rank : start, std::int64_t{0}, rank);
  end = std::clamp(end < 0 ? end + rank : end, std::int64_t{0}, rank);
  Dims dims(x.dims().begin() + start, x.dims().begin() + std::max(start, end));
  p.Set(n, 0, DType::kInt64, Shape::OfStatic({static_cast<std::int64_t>(dims.size())}));
  p.SetKnown(n, 0, std::move(dims));
}

void SizeOp(Propagator& p, const Node& n) {
  p.Set(n, 0, DType::kInt64, Shape::Scalar());
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  Dim total = Dim::Static(1);
  for (const Dim& d : x.dims()) total = MulDims(total, d);
  p.SetKnown(n, 0, Dims{total});
}

void ExpandOp(Propagator& p, const Node& n) {
  const auto& target = p.K(n, 1);
  if (!target) return;
  Shape t(*target);
  p.Set(n, 0, p.T(n, 0).dtype, BroadcastShapes(std::vector<const Shape*>{&p.S(n, 0), &t}));
}

void ConstantOfShapeOp(Propagator& p, const Node& n) {
  const auto& target = p.K(n, 0);
  if (!target) {
    const Shape& s = p.S(n, 0);
    if (s.rank_known() && s.rank() == 1 && s.dim(0).is_static()) {
      p.Set(n, 0, DType::kFloat32,
            Shape(Dims(static_cast<std::size_t>(s.dim(0).value()), Dim::Unknown())));
    }
    return;
  }
  p.Set(n, 0, DType::kFloat32, Shape(*target));
  // A small constant fill of a static shape folds: ONNX exporters build shapes this way.
  auto fill = n.IntAttr("value");
  auto count = Shape(*target).NumElements();
  if (fill && count && *count <= static_cast<std::int64_t>(kMaxKnownInts)) {
    p.SetKnown(n, 0, Dims(static_cast<std::size_t>(*count), Dim::Static(*fill)));
  }
}

void RangeOp(Propagator& p, const Node& n) {
  auto start = p.StaticInts(n, 0);
  auto limit = p.StaticInts(n, 1);
  auto delta = p.StaticInts(n, 2);
  const DType dt = p.T(n, 0).dtype;
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1 &&
      (*delta)[0] != 0) {
    const std::int64_t s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
    const std::int64_t count =
        std::max<std::int64_t>(0, d > 0 ? (l - s + d - 1) / d : (s - l - d - 1) / -d);
    p.Set(n, 0, dt, Shape::OfStatic({count}));
    if (count <= static_cast<std::int64_t>(kMaxKnownInts)) {
      Dims folded;
      for (std::int64_t i = 0; i < count; ++i) folded.push_back(Dim::Static(s + i * d));
      p.SetKnown(n, 0, std::move(folded));
    }
    return;
  }
  p.Set(n, 0, dt, Shape(Dims{Dim::Unknown()}));
}

void TileOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  const auto& reps = p.K(n, 1);
  if (!x.rank_known() || !reps || reps->size() != x.rank()) return;
  Dims out;
  for (std::size_t i = 0; i < x.rank(); ++i) out.push_back(MulDims(x.dim(i), (*reps)[i]));
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void PadOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  auto pads = p.AttrOrInput(n, "pads", 1);
  if (!x.rank_known()) return;
  if (!pads) {
    p.Set(n, 0, p.T(n, 0).dtype, Shape(Dims(x.rank(), Dim::Unknown())));
    return;
  }
  std::vector<std::size_t> axes;
  if (auto a = n.input(3) != kNoValue ? p.StaticInts(n, 3) : std::nullopt) {
    for (std::int64_t v : *a) {
      auto ax = NormalizeAxis(v, x.rank());
      if (!ax) return;
      axes.push_back(*ax);
    }
  } else {
    for (std::size_t i = 0; i < x.rank(); ++i) axes.push_back(i);
  }
  if (pads->size() != 2 * axes.size()) return;
  Dims out = x.dims();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    out[axes[i]] = AddDims(out[axes[i]], Dim::Static((*pads)[i] + (*pads)[i + axes.size()]));
  }
  p.Set(n, 0, p.T(n, 0).dtype, Shape(std::move(out)));
}

void ResizeOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  const std::size_t sizes_input = n.op_type == "Upsample" ? 99 : 3;
  if (auto sizes = p.StaticInts(n, sizes_input);
      sizes && x.rank_known() && sizes->size() == x.rank()) {
    p.Set(n, 0, p.T(n, 0).dtype, Shape::OfStatic(*sizes));
    return;
  }
  if (x.rank_known()) p.Set(n, 0, p.T(n, 0).dtype, Shape(Dims(x.rank(), Dim::Unknown())));
}

void ReduceOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  const bool keep = n.IntAttr("keepdims").value_or(1) != 0;
  std::optional<std::vector<std::int64_t>> axes;
  if (n.op_type == "ArgMax" || n.op_type == "ArgMin") {
    axes = std::vector<std::int64_t>{n.IntAttr("axis").value_or(0)};
  } else {
    axes = p.AttrOrInput(n, "axes", 1);
    if (!axes && n.input(1) != kNoValue) return;  // axes decided at run time
  }
  std::vector<bool> reduced(x.rank(), !axes || axes->empty());
  if (axes && axes->empty() && n.IntAttr("noop_with_empty_axes").value_or(0) != 0) {
    p.SetLike(n, 0, 0);
    return;
  }
  if (axes) {
    for (std::int64_t a : *axes) {
      auto ax = NormalizeAxis(a, x.rank());
      if (!ax) return;
      reduced[*ax] = true;
    }
  }
  Dims out;
  for (std::size_t i = 0; i < x.rank(); ++i) {
    if (!reduced[i]) {
      out.push_back(x.dim(i));
    } else if (keep) {
      out.push_back(Dim::Static(1));
    }
  }
  const bool arg = n.op_type == "ArgMax" || n.op_type == "ArgMin";
  p.Set(n, 0, arg ? DType::kInt64 : p.T(n, 0).dtype, Shape(std::move(out)));
}

void TopKOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  if (!x.rank_known()) return;
  auto axis = NormalizeAxis(n.IntAttr("axis").value_or(-1), x.rank());
  if (!axis) return;
  Dims out = x.dims();
  auto k = p.StaticInts(n, 1);
  out[*axis] = k && k->size() == 1 ? Dim::Static((*k)[0]) : Dim::Unknown();
  p.Set(n, 0, p.T(n, 0).dtype, Shape(out));
  p.Set(n, 1, DType::kInt64, Shape(out));
}

void NonZeroOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  Dims out = {x.rank_known() ? Dim::Static(static_cast<std::int64_t>(x.rank())) : Dim::Unknown(),
              Dim::Unknown()};
  p.Set(n, 0, DType::kInt64, Shape(std::move(out)));
}

void ScatterLike(Propagator& p, const Node& n) { p.SetLike(n, 0, 0); }

void LayerNormOp(Propagator& p, const Node& n) {
  p.SetLike(n, 0, 0);
  const Shape& x = p.S(n, 0);
  if (!x.rank_known() || n.outputs.size() < 2) return;
  auto axis = NormalizeAxis(n.IntAttr("axis").value_or(-1), x.rank());
  if (!axis) return;
  Dims stat = x.dims();
  for (std::size_t i = *axis; i < stat.size(); ++i) stat[i] = Dim::Static(1);
  for (std::size_t o = 1; o < n.outputs.size(); ++o) p.Set(n, o, DType::kFloat32, Shape(stat));
}

// BatchNormalization exported in training mode (training_mode=1, or opset < 9's saved statistics)
// also returns per-channel statistics: the running mean and variance, shaped like the scale.
void BatchNormOp(Propagator& p, const Node& n) {
  p.SetLike(n, 0, 0);
  if (n.inputs.size() < 2 || n.input(1) == kNoValue) return;
  for (std::size_t o = 1; o < n.outputs.size(); ++o) p.SetLike(n, o, 1);
}

void DepthSpaceOp(Propagator& p, const Node& n) {
  const Shape& x = p.S(n, 0);
  auto bs = n.IntAttr("blocksize");
  if (!x.rank_known() || x.rank() != 4 || !bs || *bs <= 0) return;
  const Dim b = Dim::Static(*bs);
  const Dim b2 = Dim::Static(*bs * *bs);
  if (n.op_type == "DepthToSpace") {
    p.Set(n, 0, p.T(n, 0).dtype,
          Shape(Dims{x.dim(0), FloorDivDims(x.dim(1), b2), MulDims(x.dim(2), b),
                     MulDims(x.dim(3), b)}));
  } else {
    p.Set(n, 0, p.T(n, 0).dtype,
          Shape(Dims{x.dim(0), MulDims(x.dim(1), b2), FloorDivDims(x.dim(2), b),
                     FloorDivDims(x.dim(3), b)}));
  }
}

const std::map<std::string, Propagator::Fn, std::less<>>& Propagator::Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, Fn, std::less<>>();
    for (const char* op : {"Abs",
                           "Acos",
                           "Acosh",
                           "Asin",
                           "Asinh",
                           "Atan",
                           "Atanh",
                           "Ceil",
                           "Celu",
                           "Clip",
                           "Cos",
                           "Cosh",
                           "CumSum",
                           "Dropout",
                           "Elu",
                           "Erf",
                           "Exp",
                           "Floor",
                           "Gelu",
                           "GroupNormalization",
                           "HardSigmoid",
                           "HardSwish",
                           "Hardmax",
                           "Identity",
                           "InstanceNormalization",
                           "LRN",
                           "LeakyRelu",
                           "Log",
                           "LogSoftmax",
                           "LpNormalization",
                           "MeanVarianceNormalization",
                           "Mish",
                           "Neg",
                           "Not",
                           "Reciprocal",
                           "Relu",
                           "Round",
                           "Selu",
                           "Shrink",
                           "Sigmoid",
                           "Sign",
                           "Sin",
                           "Sinh",
                           "Softmax",
                           "Softplus",
                           "Softsign",
                           "Sqrt",
                           "Tan",
                           "Tanh",
                           "ThresholdedRelu",
                           "Trilu",
                           "BitwiseNot",
                           "RMSNormalization"}) {
      t->emplace(op, SameAsInput);
    }
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                           "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
      t->emplace(op, Arithmetic);
    }
    for (const char* op :
         {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}) {
      t->emplace(op, Compare);
    }
    t->emplace("IsNaN", [](Propagator& p, const Node& n) { p.Set(n, 0, DType::kBool, p.S(n, 0)); });
    t->emplace("IsInf", [](Propagator& p, const Node& n) { p.Set(n, 0, DType::kBool, p.S(n, 0)); });
    for (const char* op : {"AveragePool", "MaxPool", "LpPool"}) t->emplace(op, PoolOp);
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
      t->emplace(op, GlobalPoolOp);
    for (const char* op :
         {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
          "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
      t->emplace(op, ReduceOp);
    }
    for (const char* op : {"ScatterElements", "ScatterND", "Scatter"}) t->emplace(op, ScatterLike);
    t->emplace("Cast", Cast);
    t->emplace("CastLike", Cast);
    t->emplace("Concat", ConcatOp);
    t->emplace("ConstantOfShape", ConstantOfShapeOp);
    t->emplace("Conv", ConvOp);
    t->emplace("ConvTranspose", ConvTransposeOp);
    t->emplace("DepthToSpace", DepthSpaceOp);
    t->emplace("Expand", ExpandOp);
    t->emplace("Flatten", FlattenOp);
    t->emplace("Gather", GatherOp);
    t->emplace("GatherElements", GatherElementsOp);
    t->emplace("GatherND", GatherNDOp);
    t->emplace("Gemm", GemmOp);
    t->emplace("BatchNormalization", BatchNormOp);
    t->emplace("LayerNormalization", LayerNormOp);
    t->emplace("MatMul", MatMulOp);
    t->emplace("MatMulInteger", MatMulOp);
    t->emplace("NonZero", NonZeroOp);
    t->emplace("Pad", PadOp);
    t->emplace("Range", RangeOp);
    t->emplace("Reshape", ReshapeOp);
    t->emplace("Resize", ResizeOp);
    t->emplace("Upsample", ResizeOp);
    t->emplace("Shape", ShapeOp);
    t->emplace("Size", SizeOp);
    t->emplace("Slice", SliceOp);
    t->emplace("SpaceToDepth", DepthSpaceOp);
    t->emplace("Split", SplitOp);
    t->emplace("Squeeze", SqueezeOp);
    t->emplace("Tile", TileOp);
    t->emplace("TopK", TopKOp);
    t->emplace("Transpose", TransposeOp);
    t->emplace("Unsqueeze", UnsqueezeOp);
    t->emplace("Where", WhereOp);
    return t;
  }();
  return *table;
}

}  // namespace

namespace {

// Refreshes the captured values of `sub` from the enclosing graphs, innermost first.
void RefreshCaptures(Graph& sub, const std::vector<const Graph*>& scopes) {
  for (const Value& v : sub.values()) {
    if (v.origin != ValueOrigin::kCaptured) continue;
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto outer = (*it)->FindValue(v.name);
      if (!outer) continue;
      Value& mine = sub.mutable_value(v.id);
      mine.type = (*it)->value(*outer).type;
      mine.known_ints = (*it)->value(*outer).known_ints;
      break;
    }
  }
}

void PropagateScoped(Graph& graph, std::vector<const Graph*>& scopes,
                     std::optional<std::int64_t> rebatch) {
  Propagator(graph, rebatch).Run();
  scopes.push_back(&graph);
  for (NodeId id : graph.topo_order()) {
    for (Subgraph& sub : graph.mutable_node(id).subgraphs) {
      RefreshCaptures(*sub.graph, scopes);
      PropagateScoped(*sub.graph, scopes, rebatch);
    }
  }
  scopes.pop_back();
}

}  // namespace

void PropagateShapes(Graph& graph, std::optional<std::int64_t> rebatch) {
  std::vector<const Graph*> scopes;
  PropagateScoped(graph, scopes, rebatch);
}

}  // namespace tpudoctor::onnx_frontend
