#include "tpudoctor/cost/op_cost.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

namespace tpudoctor {
namespace {

std::optional<double> Elements(const Shape& s) {
  if (!s.is_static()) return std::nullopt;
  double n = 1;
  for (const Dim& d : s.dims()) n *= static_cast<double>(d.value());
  return n;
}

class Coster {
 public:
  Coster(const Graph& g, int element_bytes) : g_(g), eb_(element_bytes) {}

  OpCost Cost(const Node& n) const {
    switch (n.op) {
      case Op::kDot:
        return HloDot(n);
      case Op::kConvolution:
        return HloConv(n);
      case Op::kFusion:
      case Op::kCall:
        return HloFusion(n);
      case Op::kParameter:
        return Free();
      default:
        break;
    }
    // Frontends of frameworks whose matmuls and convolutions are not ONNX-shaped (torch's
    // linear, Keras and TensorFlow NHWC convolutions) describe them with XLA's dimension numbers.
    if (n.kind == OpKind::kMatMul && n.dot) return HloDot(n);
    if (n.kind == OpKind::kConv && n.conv) return HloConv(n);
    switch (n.kind) {
      case OpKind::kConstant:
      case OpKind::kShapeOf:
        return Free();
      case OpKind::kLayout:
        return n.traits.view ? Free() : Memory(n);
      case OpKind::kCast:
      case OpKind::kRandom:
        return Vector(n, 0);
      case OpKind::kElementwise:
        // A rough count of the VPU/EUP work per output element.
        return Vector(n, n.traits.transcendental ? 4 : 1);
      case OpKind::kReduce:
        return Vector(n, 1, /*per_input=*/true);
      case OpKind::kNormalization:
      case OpKind::kSoftmax:
        return Vector(n, 5, /*per_input=*/true);
      case OpKind::kPool:
        return Pool(n);
      case OpKind::kGather:
      case OpKind::kScatter:
        return Vector(n, 0);
      case OpKind::kResize:
        return Vector(n, 4);
      case OpKind::kSortTopK:
        return Vector(n, 8, /*per_input=*/true);
      case OpKind::kMatMul:
        return MatMul(n);
      case OpKind::kConv:
      case OpKind::kConvTranspose:
        return Conv(n);
      case OpKind::kRecurrent:
        return Recurrent(n);
      case OpKind::kControlFlow:
        return ControlFlow(n);
      default:
        return Unknown();
    }
  }

 private:
  static OpCost Free() { return {}; }
  static OpCost Unknown() {
    OpCost c;
    c.known = false;
    return c;
  }

  std::optional<double> Bytes(ValueId v) const {
    if (v == kNoValue) return 0.0;
    return TensorBytes(g_.value(v).type, eb_);
  }
  // Sum of the bytes of inputs and outputs; nullopt if any is not static.
  bool Traffic(const Node& n, OpCost& c) const {
    for (ValueId in : n.inputs) {
      auto b = Bytes(in);
      if (!b) return false;
      c.bytes_read += *b;
    }
    for (ValueId out : n.outputs) {
      auto b = Bytes(out);
      if (!b) return false;
      c.bytes_written += *b;
    }
    return true;
  }
  std::optional<double> OutElements(const Node& n) const {
    if (n.outputs.empty()) return std::nullopt;
    return Elements(g_.value(n.outputs[0]).type.shape);
  }
  std::optional<double> InElements(const Node& n) const {
    if (n.inputs.empty() || n.input(0) == kNoValue) return std::nullopt;
    return Elements(g_.value(n.input(0)).type.shape);
  }
  // An absent input (an optional one, or a node with fewer inputs than its op takes) has no shape.
  const Shape& ShapeOf(ValueId v) const {
    static const Shape kNone;
    return v == kNoValue ? kNone : g_.value(v).type.shape;
  }

  OpCost Memory(const Node& n) const {
    OpCost c;
    c.cls = CostClass::kMemory;
    if (!Traffic(n, c)) return Unknown();
    // A slice reads only what it keeps; shape/axes inputs are negligible.
    if (n.op == Op::kSlice || n.op == Op::kGather) c.bytes_read = c.bytes_written;
    return c;
  }

  OpCost Vector(const Node& n, double flops_per_element, bool per_input = false) const {
    OpCost c;
    c.cls = CostClass::kVector;
    if (!Traffic(n, c)) return Unknown();
    auto elems = per_input ? InElements(n) : OutElements(n);
    if (elems) c.flops = *elems * flops_per_element;
    if (n.kind == OpKind::kGather)
      c.bytes_read = c.bytes_written * 2;  // rows read + indices, not the table
    return c;
  }

  OpCost Pool(const Node& n) const {
    OpCost c = Vector(n, 1);
    if (!c.known) return c;
    if (n.window) {
      double window = 1;
      for (std::int64_t v : *n.window) window *= static_cast<double>(v);
      if (auto out = OutElements(n)) c.flops = *out * window;
    } else if (auto in = InElements(n)) {
      c.flops = *in;  // global pooling
    }
    return c;
  }

  // HLO dot: dims from the dimension numbers; batch and contracting dims of both sides.
  OpCost HloDot(const Node& n) const {
    if (n.inputs.size() < 2 || n.outputs.empty()) return Unknown();
    const Shape& a = ShapeOf(n.input(0));
    const Shape& b = ShapeOf(n.input(1));
    if (!a.is_static() || !b.is_static()) return Unknown();
    const DotDims dims = n.dot.value_or(DotDims{});
    const auto &lb = dims.lhs_batch, &lc = dims.lhs_contracting;
    const auto &rb = dims.rhs_batch, &rc = dims.rhs_contracting;
    auto in = [](const std::vector<std::int64_t>& v, std::size_t i) {
      return std::find(v.begin(), v.end(), static_cast<std::int64_t>(i)) != v.end();
    };
    MatmulDims d;
    d.m = d.n = d.k = 1;
    for (std::size_t i = 0; i < a.rank(); ++i) {
      const double v = static_cast<double>(a.dim(i).value());
      if (in(lb, i))
        d.batch *= v;
      else if (in(lc, i))
        d.k *= v;
      else
        d.m *= v;
    }
    for (std::size_t i = 0; i < b.rank(); ++i) {
      if (!in(rb, i) && !in(rc, i)) d.n *= static_cast<double>(b.dim(i).value());
    }
    OpCost c;
    c.cls = CostClass::kMatrix;
    if (!Traffic(n, c)) return Unknown();
    c.flops = 2 * d.batch * d.m * d.n * d.k;
    c.matmul = d;
    return c;
  }

  // HLO convolution: `dim_labels=b01f_01io->b01f`; FLOPs = 2 x output elements x (kernel window x
  // input features per group).
  OpCost HloConv(const Node& n) const {
    if (n.inputs.size() < 2 || n.outputs.empty()) return Unknown();
    const Shape& w = ShapeOf(n.input(1));
    const Shape& y = ShapeOf(n.outputs[0]);
    if (!w.is_static() || !y.is_static() || !n.conv) return Unknown();
    const ConvDims& g = *n.conv;
    if (g.kernel_rank() != w.rank() || g.output_rank() != y.rank()) return Unknown();
    // The kernel window: its input-feature dim and its spatial dims.
    double window_k =
        static_cast<double>(w.dim(static_cast<std::size_t>(g.kernel_input_feature)).value());
    for (std::int64_t i : g.kernel_spatial)
      window_k *= static_cast<double>(w.dim(static_cast<std::size_t>(i)).value());
    double out_elems = 1;
    for (std::size_t i = 0; i < y.rank(); ++i) out_elems *= static_cast<double>(y.dim(i).value());
    const double out_features =
        static_cast<double>(y.dim(static_cast<std::size_t>(g.output_feature)).value());
    OpCost c;
    c.cls = CostClass::kMatrix;
    if (!Traffic(n, c)) return Unknown();
    MatmulDims d;
    const double groups = static_cast<double>(g.feature_groups);
    d.batch = groups;
    d.m = out_elems / out_features;
    d.n = out_features / groups;
    d.k = window_k;
    c.flops = 2 * out_elems * window_k;
    c.matmul = d;
    return c;
  }

  // A fusion is one kernel: the work of its computation, the traffic of its operands and results.
  OpCost HloFusion(const Node& n) const {
    if (n.subgraphs.empty()) return Unknown();
    OpCost inner = SubgraphCost(*n.subgraphs.front().graph);
    if (!inner.known) return inner;
    OpCost c;
    c.cls = inner.flops > 0 && inner.matmul ? CostClass::kMatrix : CostClass::kVector;
    if (!Traffic(n, c)) return Unknown();
    c.flops = inner.flops;
    c.matmul = inner.matmul;
    if (c.matmul) c.cls = CostClass::kMatrix;
    return c;
  }

  // ONNX `Attention` (opset 23): softmax(QK^T * scale + mask)V as one op, run as a fused
  // (flash) kernel, so its traffic is Q, K, V and the output, never the S x S scores. Q/K/V are
  // [batch, heads, seq, head_dim], or [batch, seq, heads x head_dim] with the heads in attributes.
  // FLOPs: the two matmuls, 2 x batch x heads x Sq x Skv x (qk head dim + v head dim); a causal
  // mask lets the kernel skip the blocks above the diagonal (half of them).
  OpCost Attention(const Node& n) const {
    const Shape& q = ShapeOf(n.input(0));
    const Shape& k = ShapeOf(n.input(1));
    if (!q.is_static() || !k.is_static() || q.rank() != k.rank() ||
        (q.rank() != 3 && q.rank() != 4))
      return Unknown();
    OpCost c;
    c.cls = CostClass::kMatrix;
    if (!Traffic(n, c)) return Unknown();
    const auto v = [](const Dim& d) { return static_cast<double>(d.value()); };
    if (n.inputs.size() < 3 || n.input(2) == kNoValue) return Unknown();
    const Shape& val = ShapeOf(n.input(2));
    if (!val.is_static() || val.rank() != q.rank()) return Unknown();
    // dh: a head's query/key width; dv: its value width (wider keys than values: latent
    // attention's rotary part).
    double heads = 0, sq = 0, skv = 0, dh = 0, dv = 0;
    if (q.rank() == 4) {
      heads = v(q.dim(1));
      sq = v(q.dim(2));
      skv = v(k.dim(2));
      dh = v(q.dim(3));
      dv = v(val.dim(3));
    } else {
      heads = static_cast<double>(n.IntAttr("q_num_heads").value_or(0));
      const double kv_heads = static_cast<double>(n.IntAttr("kv_num_heads").value_or(heads));
      if (heads <= 0 || kv_heads <= 0) return Unknown();
      sq = v(q.dim(1));
      skv = v(k.dim(1));
      dh = v(q.dim(2)) / heads;
      dv = v(val.dim(2)) / kv_heads;
    }
    const AttentionMask mask = AttentionMaskOf(n);
    const double causal_share = AttentionPairShare(mask, sq, skv);
    MatmulDims d;
    d.m = sq;
    d.n = skv;
    d.k = (dh + dv) / 2;
    // QK^T (contracting dh) and PV (dv) have the same shape of work at the mean width: count them
    // as twice the batch.
    d.batch = v(q.dim(0)) * heads * 2 * causal_share;
    c.flops = 2 * d.batch * d.m * d.n * d.k;
    c.matmul = d;
    c.attention = mask;
    return c;
  }

  // A MatMul without dimension numbers (FillGeometry gives every other one dims): numpy-style
  // batch dims that broadcast, e.g. [B, H, M, K] x [H, K, N].
  OpCost MatMul(const Node& n) const {
    if (n.op == Op::kAttention) return Attention(n);
    if (n.op != Op::kMatMul && n.op != Op::kMatMulInteger) return Unknown();
    const Shape& a = ShapeOf(n.input(0));
    const Shape& b = ShapeOf(n.input(1));
    if (!a.is_static() || !b.is_static() || a.rank() == 0 || b.rank() == 0 || n.outputs.empty())
      return Unknown();
    const Shape& out = ShapeOf(n.outputs[0]);
    if (!out.is_static()) return Unknown();
    OpCost c;
    c.cls = CostClass::kMatrix;
    if (!Traffic(n, c)) return Unknown();
    MatmulDims d;
    d.k = static_cast<double>(a.dims().back().value());
    d.m = a.rank() >= 2 ? static_cast<double>(a.dim(a.rank() - 2).value()) : 1;
    d.n = b.rank() >= 2 ? static_cast<double>(b.dims().back().value()) : 1;
    const std::size_t batch_dims = out.rank() - (a.rank() >= 2 ? 1 : 0) - (b.rank() >= 2 ? 1 : 0);
    for (std::size_t i = 0; i < batch_dims && i < out.rank(); ++i)
      d.batch *= static_cast<double>(out.dim(i).value());
    c.flops = 2 * d.batch * d.m * d.n * d.k;
    c.matmul = d;
    return c;
  }

  OpCost Conv(const Node& n) const {
    const Shape& x = ShapeOf(n.input(0));
    const Shape& w = ShapeOf(n.input(1));
    if (n.outputs.empty()) return Unknown();
    const Shape& y = ShapeOf(n.outputs[0]);
    if (!x.is_static() || !w.is_static() || !y.is_static() || w.rank() < 3 || y.rank() != w.rank())
      return Unknown();
    OpCost c;
    c.cls = CostClass::kMatrix;
    if (!Traffic(n, c)) return Unknown();
    const double group =
        static_cast<double>(std::max<std::int64_t>(1, n.IntAttr("group").value_or(1)));
    double kernel = 1;
    for (std::size_t i = 2; i < w.rank(); ++i) kernel *= static_cast<double>(w.dim(i).value());
    double spatial_out = 1, spatial_in = 1;
    for (std::size_t i = 2; i < y.rank(); ++i) spatial_out *= static_cast<double>(y.dim(i).value());
    for (std::size_t i = 2; i < x.rank(); ++i) spatial_in *= static_cast<double>(x.dim(i).value());
    const double batch = static_cast<double>(y.dim(0).value());
    MatmulDims d;
    d.batch = group;
    if (n.kind == OpKind::kConvTranspose) {
      // Each input pixel scatters Cin/group × kernel × Cout/group products.
      const double cin = static_cast<double>(w.dim(0).value());
      const double cout_per_group = static_cast<double>(w.dim(1).value());
      d.m = batch * spatial_in;
      d.n = cout_per_group * kernel;
      d.k = cin / group;
    } else {
      const double cout = static_cast<double>(w.dim(0).value());
      const double cin_per_group = static_cast<double>(w.dim(1).value());
      d.m = batch * spatial_out;  // implicit-GEMM view: output pixels × output channels
      d.n = cout / group;
      d.k = cin_per_group * kernel;
    }
    c.flops = 2 * d.batch * d.m * d.n * d.k;
    c.matmul = d;
    return c;
  }

  OpCost Recurrent(const Node& n) const {
    const Shape& x = ShapeOf(n.input(0));
    const Shape& w = ShapeOf(n.input(1));
    const Shape& r = ShapeOf(n.input(2));
    if (!x.is_static() || !w.is_static() || !r.is_static() || x.rank() != 3 || w.rank() != 3 ||
        r.rank() != 3) {
      return Unknown();
    }
    OpCost c;
    c.cls = CostClass::kMatrix;
    if (!Traffic(n, c)) return Unknown();
    const bool batch_first = n.IntAttr("layout").value_or(0) == 1;
    const double seq = static_cast<double>(x.dim(batch_first ? 1 : 0).value());
    const double batch = static_cast<double>(x.dim(batch_first ? 0 : 1).value());
    MatmulDims d;
    d.batch = seq * static_cast<double>(w.dim(0).value());
    d.m = batch;
    d.n = static_cast<double>(w.dim(1).value());
    d.k = static_cast<double>(w.dim(2).value() + r.dim(2).value());
    c.flops = 2 * d.batch * d.m * d.n * d.k;
    c.matmul = d;
    return c;
  }

  // A conditional costs its costliest branch; a loop one iteration of its body, times the trip
  // count when that is a known constant (ONNX Loop's M). An XLA while's trip count is a runtime
  // value of the program: one iteration is counted, and CF001 says so.
  OpCost ControlFlow(const Node& n) const {
    if (!n.control) return Unknown();
    const tpudoctor::ControlFlow& cf = *n.control;
    if (cf.form == ControlFlow::Form::kBranch) {
      std::optional<OpCost> best;
      for (std::size_t b : cf.branches) {
        OpCost c = SubgraphCost(*n.subgraphs[b].graph);
        if (!c.known) return Unknown();
        if (!best || c.flops + c.bytes_read > best->flops + best->bytes_read) best = c;
      }
      return best ? *best : Unknown();
    }
    if (!cf.body) return Unknown();
    OpCost body = SubgraphCost(*n.subgraphs[*cf.body].graph);
    if (!cf.trip_count) return body;
    const ValueId m = n.input(*cf.trip_count);
    const auto trip = m == kNoValue ? std::nullopt : g_.value(m).StaticInts();
    if (!trip || trip->size() != 1) return Unknown();
    const double t = static_cast<double>((*trip)[0]);
    body.flops *= t;
    body.bytes_read *= t;
    body.bytes_written *= t;
    body.matmul.reset();
    return body;
  }

  OpCost SubgraphCost(const Graph& sub) const {
    OpCost total;
    total.cls = CostClass::kVector;
    Coster inner(sub, eb_);
    double largest = 0;
    for (NodeId id : sub.topo_order()) {
      OpCost c = inner.Cost(sub.node(id));
      if (!c.known) return Unknown();
      total.flops += c.flops;
      total.bytes_read += c.bytes_read;
      total.bytes_written += c.bytes_written;
      if (c.matmul && c.flops > largest) {  // the MXU shape of a fusion is its largest matmul's
        largest = c.flops;
        total.matmul = c.matmul;
      }
    }
    return total;
  }

  const Graph& g_;
  int eb_;
};

// Small results that a framework computes before the step runs: shape arithmetic (a tensor's
// dims gathered, cast, divided, concatenated into a new shape; a scale of 1/sqrt(head dim)). Eager
// PyTorch holds them as Python numbers and XLA folds them into constants: no kernel runs. Large
// tensors filled from a shape (ConstantOfShape of [batch, seq, hidden]) and results the program
// returns are still written.
constexpr double kMaxFoldedElements = 1024;

std::vector<bool> CompileTimeNodes(const Graph& g) {
  std::vector<bool> known(g.values().size(), false);
  std::vector<bool> node(g.nodes().size(), false);
  for (const Value& v : g.values())
    known[static_cast<std::size_t>(v.id)] = v.known_ints.has_value();
  std::vector<bool> returned(g.values().size(), false);
  for (ValueId v : g.outputs()) returned[static_cast<std::size_t>(v)] = true;
  auto small = [&](ValueId v) {
    const auto n = Elements(g.value(v).type.shape);
    return !returned[static_cast<std::size_t>(v)] &&
           (g.value(v).known_ints || (n && *n <= kMaxFoldedElements));
  };
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.kind == OpKind::kRandom || n.kind == OpKind::kControlFlow || n.outputs.empty()) continue;
    const bool from_known = n.kind == OpKind::kConstant || n.kind == OpKind::kShapeOf ||
                            (!n.inputs.empty() && std::ranges::all_of(n.inputs, [&](ValueId v) {
                              return v == kNoValue || known[static_cast<std::size_t>(v)];
                            }));
    if (!from_known || !std::ranges::all_of(n.outputs, small)) continue;
    node[static_cast<std::size_t>(id)] = true;
    for (ValueId out : n.outputs) known[static_cast<std::size_t>(out)] = true;
  }
  return node;
}

}  // namespace

AttentionMask AttentionMaskOf(const Node& attention) {
  return {attention.IntAttr("is_causal").value_or(0) != 0,
          static_cast<double>(attention.IntAttr("window").value_or(0)),
          static_cast<double>(attention.IntAttr("chunk").value_or(0))};
}

double AttentionPairShare(const AttentionMask& mask, double sq, double skv, double block) {
  const auto [causal, window, chunk] = mask;
  if (sq <= 0 || skv <= 0) return 1;
  if (chunk > 0 && chunk < skv && causal && sq == skv) {
    // Chunked (Llama 4): causal within each aligned chunk of `chunk` tokens; whole tiles of
    // the chunks' diagonal blocks when blocked.
    const double tile = block > 0 ? std::min(block, chunk) : 0;
    const auto triangle = [&](double n) {
      if (tile <= 0) return n * (n + 1) / 2;
      const double blocks = std::ceil(n / tile);
      return tile * tile * blocks * (blocks + 1) / 2;
    };
    const double full = std::floor(skv / chunk);
    const double rest = skv - full * chunk;
    return std::min(1.0, (full * triangle(chunk) + triangle(rest)) / (sq * skv));
  }
  const bool local = window > 0 && window < skv;
  if (block <= 0) {
    // A causal query attends to the keys before it: half the pairs. A local (sliding-window)
    // attention attends to at most `window` of them: w(w+1)/2 pairs over the first w queries,
    // then w each.
    if (local) {
      return causal ? (window * sq - window * window / 2) / (sq * skv)
                    : std::min(1.0, (2 * window + 1) / skv);
    }
    return causal ? 0.5 : 1.0;
  }
  if (!causal && !local) return 1;
  const double blocks = std::ceil(sq / block);
  if (causal && !local && sq == skv) {
    // Query block i computes key blocks 0..i: full blocks of `block` rows reach (i + 1) x block
    // keys, the last (partial) one all of them.
    const double last_rows = sq - (blocks - 1) * block;
    const double pairs = block * block * (blocks - 1) * blocks / 2 + last_rows * skv;
    return std::min(1.0, pairs / (sq * skv));
  }
  // Tile by tile: query block [q0, q1) reaches keys [lo, hi] (queries aligned to the last keys,
  // as when a prompt extends a cache), widened to whole key blocks.
  const double offset = skv - sq;
  if (blocks > 1e6) return AttentionPairShare(mask, sq, skv);
  double pairs = 0;
  for (double i = 0; i < blocks; ++i) {
    const double q0 = i * block, q1 = std::min(sq, q0 + block);
    double lo = 0, hi = skv - 1;
    if (causal) hi = std::min(hi, q1 - 1 + offset);
    if (window > 0) {
      lo = std::max(0.0, q0 + offset - window);
      if (!causal) hi = std::min(skv - 1, q1 - 1 + offset + window);
    }
    if (hi < lo) continue;
    const double k0 = std::floor(lo / block) * block;
    const double k1 = std::min(skv, (std::floor(hi / block) + 1) * block);
    pairs += (q1 - q0) * (k1 - k0);
  }
  return std::min(1.0, pairs / (sq * skv));
}

std::optional<double> TensorBytes(const TensorType& type, int element_bytes) {
  if (type.kind != ValueKind::kTensor) return std::nullopt;
  auto n = Elements(type.shape);
  if (!n) return std::nullopt;
  const int bits =
      element_bytes > 0 && IsFloat(type.dtype) ? element_bytes * 8 : BitsOf(type.dtype);
  if (bits == 0) return std::nullopt;
  return std::ceil(*n * bits / 8.0);
}

std::vector<OpCost> ComputeOpCosts(const Graph& graph, int element_bytes) {
  Coster coster(graph, element_bytes);
  const std::vector<bool> compile_time = CompileTimeNodes(graph);
  std::vector<OpCost> out(graph.nodes().size());
  for (NodeId id : graph.topo_order()) {
    const std::size_t i = static_cast<std::size_t>(id);
    if (!compile_time[i]) out[i] = coster.Cost(graph.node(id));
  }
  return out;
}

}  // namespace tpudoctor
