#include "src/frontends/keras/keras_layers.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "src/support/json_input.h"
#include "tpudoctor/ir/shape_math.h"
#include "tpudoctor/knowledge/keras_layers.h"

namespace tpudoctor::keras {
namespace {

using nlohmann::json;
using Dims = std::vector<Dim>;

// ---- Reading a config without trusting it ----

const json& Empty() {
  static const json* e = new json(json::object());
  return *e;
}

const json& Cfg(const LayerCall& c) {
  return c.config != nullptr && c.config->is_object() ? *c.config : Empty();
}

// A config member; `null` counts as absent (Keras writes `"strides": null` for defaults).
const json* Get(const json& cfg, const char* key) {
  const json* v = Member(cfg, key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

std::optional<std::int64_t> AsInt(const json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > (std::uint64_t{1} << 62))
      return std::nullopt;
    return v.get<std::int64_t>();
  }
  return std::nullopt;
}

std::int64_t Int(const json& cfg, const char* key, std::int64_t def) {
  const json* v = Get(cfg, key);
  if (v == nullptr) return def;
  if (v->is_array() && v->size() == 1) return AsInt((*v)[0]).value_or(def);
  return AsInt(*v).value_or(def);
}

// An int or a list of ints, as `n` values (an int applies to every one).
std::vector<std::int64_t> Ints(const json& cfg, const char* key, std::size_t n, std::int64_t def) {
  std::vector<std::int64_t> out(n, def);
  const json* v = Get(cfg, key);
  if (v == nullptr) return out;
  if (auto one = AsInt(*v)) return std::vector<std::int64_t>(n, *one);
  if (v->is_array()) {
    for (std::size_t i = 0; i < n && i < v->size(); ++i) out[i] = AsInt((*v)[i]).value_or(def);
  }
  return out;
}

std::string Str(const json& cfg, const char* key, const std::string& def) {
  const json* v = Get(cfg, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : def;
}

bool Bool(const json& cfg, const char* key, bool def) {
  const json* v = Get(cfg, key);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : def;
}

// ---- Dims ----

Dim Static(std::int64_t v) { return v >= 0 ? Dim::Static(v) : Dim::Unknown(); }

Dim MulDim(const Dim& a, std::int64_t b) {
  std::int64_t r;
  if (!a.is_static() || __builtin_mul_overflow(a.value(), b, &r)) return Dim::Unknown();
  return Static(r);
}

Dim AddDim(const Dim& a, std::int64_t b) {
  std::int64_t r;
  if (!a.is_static() || __builtin_add_overflow(a.value(), b, &r)) return Dim::Unknown();
  return Static(r);
}

// Output size of a window sliding over `in` (Keras `valid`/`same`/`causal` padding).
Dim Slide(const Dim& in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
          const std::string& padding) {
  const bool same = padding == "same" || padding == "causal";
  return WindowOutput(in, k, stride, dilation, same ? WindowPadding::kSame : WindowPadding::kValid);
}

Dim SlideTransposed(const Dim& in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
                    const std::string& padding) {
  if (!in.is_static() || stride <= 0 || k <= 0) return Dim::Unknown();
  const std::int64_t n = in.value();
  if (padding == "same") return MulDim(in, stride);
  return Static((n - 1) * stride + dilation * (k - 1) + 1);
}

std::int64_t Axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

// ---- Building a layer's stages ----

class Builder {
 public:
  Builder(const LayerCall& call, LayerResult& result) : call_(call), r_(result) {}

  const json& cfg() const { return Cfg(call_); }
  std::size_t num_inputs() const { return call_.inputs.size(); }
  bool known(std::size_t i = 0) const {
    return i < call_.inputs.size() && call_.inputs[i].shape.rank_known();
  }
  Dims in(std::size_t i = 0) const {
    return i < call_.inputs.size() ? call_.inputs[i].shape.dims() : Dims();
  }
  DType in_dtype(std::size_t i = 0) const {
    return i < call_.inputs.size() ? call_.inputs[i].dtype : DType::kUnknown;
  }
  DType compute() const { return call_.compute; }

  int Weight(const std::string& name, Dims dims) {
    r_.weights.push_back(
        {name, TensorType{ValueKind::kTensor, call_.variable, Shape(std::move(dims))}});
    return static_cast<int>(r_.weights.size()) - 1;
  }
  // Adds a stage and returns the pool index of its output.
  int Add(std::string op, OpKind kind, std::vector<int> inputs, std::vector<int> weights,
          TensorType out, std::vector<Attribute> attrs = {}) {
    Stage s;
    s.op = std::move(op);
    s.kind = kind;
    s.inputs = std::move(inputs);
    s.weights = std::move(weights);
    s.output = std::move(out);
    s.attrs = std::move(attrs);
    r_.stages.push_back(std::move(s));
    return static_cast<int>(call_.inputs.size() + r_.stages.size()) - 1;
  }
  int WeightOf(const std::string& name, TensorType type) {
    r_.weights.push_back({name, std::move(type)});
    return static_cast<int>(r_.weights.size()) - 1;
  }
  Stage& last() { return r_.stages.back(); }
  TensorType T(Dims d) const {
    return TensorType{ValueKind::kTensor, call_.compute, Shape(std::move(d))};
  }
  TensorType T(Dims d, DType dtype) const {
    return TensorType{ValueKind::kTensor, dtype, Shape(std::move(d))};
  }
  TensorType Unknown(DType dtype) const { return TensorType{ValueKind::kTensor, dtype, Shape()}; }
  TensorType Unknown() const { return Unknown(call_.compute); }
  void Output(int pool) { r_.outputs.push_back(pool); }
  void Problem(std::string why) {
    if (r_.problem.empty()) r_.problem = std::move(why);
  }
  std::vector<int> AllInputs() const {
    std::vector<int> v(call_.inputs.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
    return v;
  }
  const LayerCall& call() const { return call_; }

 private:
  const LayerCall& call_;
  LayerResult& r_;
};

using Rule = std::function<void(Builder&, const std::string& op, OpKind kind)>;

// Spatial rank of a conv/pool layer: from the class name (Conv2D → 2), else the input.
std::size_t SpatialRank(const Builder& b) {
  const std::string& c = b.call().class_name;
  for (char d : {'1', '2', '3'}) {
    if (c.find(std::string(1, d) + "D") != std::string::npos)
      return static_cast<std::size_t>(d - '0');
  }
  return b.known() && b.in().size() >= 2 ? b.in().size() - 2 : 2;
}

bool ChannelsFirst(const Builder& b) {
  return Str(b.cfg(), "data_format", "channels_last") == "channels_first";
}

// XLA dim labels for an N-d convolution in the layer's data format: `b01f_01io->b01f`.
std::string DimLabels(std::size_t n, bool channels_first) {
  std::string sp;
  for (std::size_t i = 0; i < n; ++i) sp += static_cast<char>('0' + i);
  const std::string act = channels_first ? "bf" + sp : "b" + sp + "f";
  return act + "_" + sp + "io->" + act;
}

std::size_t ChannelAxis(const Builder& b) { return ChannelsFirst(b) ? 1 : b.in().size() - 1; }

// Output dims of a sliding-window layer over the input's spatial axes.
Dims SlideDims(const Builder& b, std::size_t n, const std::vector<std::int64_t>& k,
               const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& dil,
               const std::string& padding, bool transposed, Dim channels) {
  Dims in = b.in();
  Dims out = in;
  const std::size_t first = ChannelsFirst(b) ? 2 : 1;
  for (std::size_t i = 0; i < n && first + i < in.size(); ++i) {
    out[first + i] = transposed ? SlideTransposed(in[first + i], k[i], stride[i], dil[i], padding)
                                : Slide(in[first + i], k[i], stride[i], dil[i], padding);
  }
  out[ChannelAxis(b)] = channels;
  return out;
}

void Identity(Builder& b, const std::string& op, OpKind kind) {
  if (b.num_inputs() == 0) return;
  DType dt = TraitsOf(b.in_dtype()).cls == DTypeClass::kFloat ? b.compute() : b.in_dtype();
  std::string canonical = op;
  if (b.call().class_name == "Activation") {
    static const std::map<std::string, std::string> kActivation = {{"relu", "Relu"},
                                                                   {"sigmoid", "Sigmoid"},
                                                                   {"tanh", "Tanh"},
                                                                   {"softmax", "Softmax"},
                                                                   {"gelu", "Gelu"},
                                                                   {"swish", "Sigmoid"},
                                                                   {"silu", "Sigmoid"},
                                                                   {"linear", "Identity"},
                                                                   {"elu", "Elu"},
                                                                   {"selu", "Selu"},
                                                                   {"softplus", "Softplus"},
                                                                   {"exponential", "Exp"},
                                                                   {"hard_sigmoid", "HardSigmoid"},
                                                                   {"leaky_relu", "LeakyRelu"},
                                                                   {"relu6", "Clip"},
                                                                   {"mish", "Mish"},
                                                                   {"log_softmax", "LogSoftmax"},
                                                                   {"hard_swish", "HardSwish"}};
    auto it = kActivation.find(Str(b.cfg(), "activation", "linear"));
    canonical = it == kActivation.end() ? "Relu" : it->second;
    if (canonical == "Softmax" || canonical == "LogSoftmax") kind = OpKind::kSoftmax;
  }
  const TensorType out = b.known() ? b.T(b.in(), dt) : b.Unknown(dt);
  b.Output(b.Add(canonical, kind, {0}, {}, out));
}

void DenseRule(Builder& b, const std::string& op, OpKind kind) {
  const std::int64_t units = Int(b.cfg(), "units", -1);
  if (!b.known() || b.in().empty()) {
    b.Problem("its input shape is unknown");
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  Dims in = b.in();
  std::vector<int> w = {b.Weight("kernel", {in.back(), Static(units)})};
  if (Bool(b.cfg(), "use_bias", true)) w.push_back(b.Weight("bias", {Static(units)}));
  Dims out = in;
  out.back() = Static(units);
  b.Output(b.Add(op, kind, {0}, w, b.T(out),
                 {{"lhs_contracting_dims",
                   std::vector<std::int64_t>{static_cast<std::int64_t>(in.size()) - 1}},
                  {"rhs_contracting_dims", std::vector<std::int64_t>{0}}}));
}

// EinsumDense: `equation` "abc,cd->abd", `output_shape` without the batch dim.
void EinsumDenseRule(Builder& b, const std::string& op, OpKind kind) {
  const std::string eq = Str(b.cfg(), "equation", "");
  const std::size_t comma = eq.find(','), arrow = eq.find("->");
  if (!b.known() || comma == std::string::npos || arrow == std::string::npos || arrow < comma) {
    b.Problem("its equation or input shape is unknown");
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  const std::string x = eq.substr(0, comma), k = eq.substr(comma + 1, arrow - comma - 1),
                    y = eq.substr(arrow + 2);
  Dims in = b.in();
  if (x.size() != in.size() || y.empty()) {
    b.Problem("its equation does not match its input rank");
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  std::map<char, Dim> size;
  for (std::size_t i = 0; i < x.size(); ++i) size[x[i]] = in[i];
  const std::vector<std::int64_t> out_shape = Ints(b.cfg(), "output_shape", y.size() - 1, -1);
  for (std::size_t i = 1; i < y.size(); ++i) {
    if (!size.count(y[i]) && out_shape[i - 1] >= 0) size[y[i]] = Static(out_shape[i - 1]);
  }
  Dims kernel, out;
  for (char c : k) kernel.push_back(size.count(c) ? size[c] : Dim::Unknown());
  for (char c : y) out.push_back(size.count(c) ? size[c] : Dim::Unknown());
  std::vector<std::int64_t> lb, rb, lc, rc;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t j = k.find(x[i]);
    if (j == std::string::npos) continue;
    const bool kept = y.find(x[i]) != std::string::npos;
    (kept ? lb : lc).push_back(static_cast<std::int64_t>(i));
    (kept ? rb : rc).push_back(static_cast<std::int64_t>(j));
  }
  std::vector<int> w = {b.Weight("kernel", kernel)};
  b.Output(b.Add(op, kind, {0}, w, b.T(out),
                 {{"lhs_batch_dims", lb},
                  {"rhs_batch_dims", rb},
                  {"lhs_contracting_dims", lc},
                  {"rhs_contracting_dims", rc}}));
}

// Conv, DepthwiseConv and the transposed convs, as XLA convolutions in the layer's data format.
void ConvLike(Builder& b, OpKind kind, bool depthwise, bool transposed, int input = 0,
              std::int64_t force_kernel = 0, const std::string& weight = "kernel") {
  const std::size_t n = SpatialRank(b);
  const auto k = force_kernel > 0 ? std::vector<std::int64_t>(n, force_kernel)
                                  : Ints(b.cfg(), "kernel_size", n, 1);
  const auto stride =
      force_kernel > 0 ? std::vector<std::int64_t>(n, 1) : Ints(b.cfg(), "strides", n, 1);
  const auto dil =
      force_kernel > 0 ? std::vector<std::int64_t>(n, 1) : Ints(b.cfg(), "dilation_rate", n, 1);
  const std::string padding = force_kernel > 0 ? "valid" : Str(b.cfg(), "padding", "valid");
  const std::int64_t groups = Int(b.cfg(), "groups", 1);
  if (!b.known() || b.in().size() != n + 2) {
    b.Problem("its input shape is unknown");
    b.Output(b.Add("Conv", kind, {input}, {}, b.Unknown()));
    return;
  }
  const Dim cin = b.in()[ChannelAxis(b)];
  Dim cout;
  Dims kernel;
  for (std::int64_t v : k) kernel.push_back(Static(v));
  std::int64_t feature_groups = groups;
  if (depthwise) {
    const std::int64_t dm = Int(b.cfg(), "depth_multiplier", 1);
    cout = MulDim(cin, dm);
    feature_groups = cin.is_static() ? cin.value() : 1;
    kernel.push_back(Static(1));
    kernel.push_back(cout);
  } else {
    cout = Static(force_kernel > 0 ? Int(b.cfg(), "filters", -1) : Int(b.cfg(), "filters", -1));
    if (transposed) {
      kernel.push_back(cout);
      kernel.push_back(cin);
    } else {
      kernel.push_back(groups > 1 && cin.is_static() ? Static(cin.value() / groups) : cin);
      kernel.push_back(cout);
    }
  }
  std::vector<int> w = {b.Weight(weight, kernel)};
  if (Bool(b.cfg(), "use_bias", true) && force_kernel == 0 &&
      !(depthwise && weight != "depthwise_kernel"))
    w.push_back(b.Weight(weight == "kernel" ? "bias" : weight + "_bias", {cout}));
  const Dims out = SlideDims(b, n, k, stride, dil, padding, transposed, cout);
  std::vector<Attribute> attrs = {{"dim_labels", DimLabels(n, ChannelsFirst(b))},
                                  {"feature_group_count", feature_groups}};
  if (transposed) attrs.push_back({"transposed", std::int64_t{1}});
  b.Output(b.Add(transposed ? "ConvTranspose" : "Conv", kind, {input}, w, b.T(out), attrs));
}

void ConvRule(Builder& b, const std::string&, OpKind kind) { ConvLike(b, kind, false, false); }
void ConvTransposeRule(Builder& b, const std::string&, OpKind) {
  ConvLike(b, OpKind::kConvTranspose, false, true);
}
void DepthwiseRule(Builder& b, const std::string&, OpKind kind) { ConvLike(b, kind, true, false); }

// SeparableConv: a depthwise conv, then a 1x1 conv to `filters`.
void SeparableRule(Builder& b, const std::string&, OpKind kind) {
  const std::size_t n = SpatialRank(b);
  if (!b.known() || b.in().size() != n + 2) {
    b.Problem("its input shape is unknown");
    b.Output(b.Add("Conv", kind, {0}, {}, b.Unknown()));
    return;
  }
  // Depthwise stage: same config, no bias, `depthwise_kernel`.
  const Dim cin = b.in()[ChannelAxis(b)];
  const std::int64_t dm = Int(b.cfg(), "depth_multiplier", 1);
  const auto k = Ints(b.cfg(), "kernel_size", n, 1);
  const auto stride = Ints(b.cfg(), "strides", n, 1);
  const auto dil = Ints(b.cfg(), "dilation_rate", n, 1);
  Dims dk;
  for (std::int64_t v : k) dk.push_back(Static(v));
  dk.push_back(Static(1));
  dk.push_back(MulDim(cin, dm));
  const Dims mid =
      SlideDims(b, n, k, stride, dil, Str(b.cfg(), "padding", "valid"), false, MulDim(cin, dm));
  const int depth =
      b.Add("Conv", kind, {0}, {b.Weight("depthwise_kernel", dk)}, b.T(mid),
            {{"dim_labels", DimLabels(n, ChannelsFirst(b))},
             {"feature_group_count", cin.is_static() ? cin.value() : std::int64_t{1}}});
  Dims pk(n, Static(1));
  const Dim cout = Static(Int(b.cfg(), "filters", -1));
  pk.push_back(MulDim(cin, dm));
  pk.push_back(cout);
  std::vector<int> w = {b.Weight("pointwise_kernel", pk)};
  if (Bool(b.cfg(), "use_bias", true)) w.push_back(b.Weight("bias", {cout}));
  Dims out = mid;
  out[ChannelsFirst(b) ? 1 : out.size() - 1] = cout;
  b.Output(b.Add(
      "Conv", kind, {depth}, w, b.T(out),
      {{"dim_labels", DimLabels(n, ChannelsFirst(b))}, {"feature_group_count", std::int64_t{1}}}));
}

void PoolRule(Builder& b, const std::string& op, OpKind kind) {
  const std::size_t n = SpatialRank(b);
  const auto k = Ints(b.cfg(), "pool_size", n, 2);
  auto stride = Ints(b.cfg(), "strides", n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (stride[i] <= 0) stride[i] = k[i];
  }
  if (!b.known() || b.in().size() != n + 2) {
    b.Problem("its input shape is unknown");
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  const Dims out = SlideDims(b, n, k, stride, std::vector<std::int64_t>(n, 1),
                             Str(b.cfg(), "padding", "valid"), false, b.in()[ChannelAxis(b)]);
  b.Output(b.Add(op, kind, {0}, {}, b.T(out), {{"kernel_shape", k}}));
}

void AdaptivePoolRule(Builder& b, const std::string& op, OpKind kind) {
  const std::size_t n = SpatialRank(b);
  if (!b.known() || b.in().size() != n + 2) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  const auto size = Ints(b.cfg(), "output_size", n, 1);
  Dims out = b.in();
  const std::size_t first = ChannelsFirst(b) ? 2 : 1;
  for (std::size_t i = 0; i < n; ++i) out[first + i] = Static(size[i]);
  b.Output(b.Add(op, kind, {0}, {}, b.T(out)));
}

void GlobalPoolRule(Builder& b, const std::string& op, OpKind kind) {
  if (!b.known() || b.in().size() < 3) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  Dims in = b.in();
  const std::size_t c = ChannelAxis(b);
  Dims out;
  if (Bool(b.cfg(), "keepdims", false)) {
    out = Dims(in.size(), Static(1));
    out[0] = in[0];
    out[c] = in[c];
  } else {
    out = {in[0], in[c]};
  }
  b.Output(b.Add(op, kind, {0}, {}, b.T(out)));
}

void FlattenRule(Builder& b, const std::string& op, OpKind kind) {
  if (!b.known() || b.in().empty()) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  Dims in = b.in();
  Dim flat = Static(1);
  for (std::size_t i = 1; i < in.size(); ++i) flat = MulDims(flat, in[i]);
  b.Output(b.Add(op, kind, {0}, {}, b.T({in[0], flat}, b.in_dtype())));
}

void ReshapeRule(Builder& b, const std::string& op, OpKind kind) {
  const json* target = Get(b.cfg(), "target_shape");
  if (!b.known() || b.in().empty() || target == nullptr || !target->is_array()) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown(b.in_dtype())));
    return;
  }
  Dims in = b.in();
  Dim total = Static(1);
  for (std::size_t i = 1; i < in.size(); ++i) total = MulDims(total, in[i]);
  Dims out = {in[0]};
  std::int64_t known = 1;
  int infer = -1;
  for (const json& v : *target) {
    const std::int64_t d = AsInt(v).value_or(-1);
    if (d < 0) {
      infer = static_cast<int>(out.size());
      out.push_back(Dim::Unknown());
    } else {
      out.push_back(Static(d));
      if (__builtin_mul_overflow(known, d, &known)) known = 0;
    }
  }
  if (infer >= 0 && total.is_static() && known > 0)
    out[static_cast<std::size_t>(infer)] = Static(total.value() / known);
  b.Output(b.Add(op, kind, {0}, {}, b.T(out, b.in_dtype())));
}

void PermuteRule(Builder& b, const std::string& op, OpKind kind) {
  Dims in = b.in();
  const auto dims = Ints(b.cfg(), "dims", in.empty() ? 0 : in.size() - 1, 0);
  if (!b.known() || in.empty()) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown(b.in_dtype())));
    return;
  }
  Dims out = {in[0]};
  for (std::int64_t d : dims)
    out.push_back(d >= 1 && static_cast<std::size_t>(d) < in.size()
                      ? in[static_cast<std::size_t>(d)]
                      : Dim::Unknown());
  b.Output(b.Add(op, kind, {0}, {}, b.T(out, b.in_dtype())));
}

void RepeatVectorRule(Builder& b, const std::string& op, OpKind kind) {
  Dims in = b.in();
  if (!b.known() || in.size() != 2) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  b.Output(b.Add(op, kind, {0}, {}, b.T({in[0], Static(Int(b.cfg(), "n", 1)), in[1]})));
}

// ZeroPadding / Cropping: `padding`/`cropping` as an int, one int per axis, or (before, after)
// pairs.
void PadOrCrop(Builder& b, const std::string& op, OpKind kind, const char* key, int sign) {
  const std::size_t n = SpatialRank(b);
  Dims in = b.in();
  if (!b.known() || in.size() != n + 2) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  std::vector<std::int64_t> total(n, 0);
  const json* p = Get(b.cfg(), key);
  for (std::size_t i = 0; i < n; ++i) {
    if (p == nullptr) {
      total[i] = 2;
    } else if (auto one = AsInt(*p)) {
      total[i] = 2 * *one;
    } else if (p->is_array() && i < p->size()) {
      const json& e = (*p)[i];
      if (auto v = AsInt(e)) total[i] = 2 * *v;
      if (e.is_array()) {
        for (const json& x : e) total[i] += AsInt(x).value_or(0);
      }
    }
  }
  Dims out = in;
  const std::size_t first = ChannelsFirst(b) ? 2 : 1;
  for (std::size_t i = 0; i < n; ++i) out[first + i] = AddDim(in[first + i], sign * total[i]);
  b.Output(b.Add(op, kind, {0}, {}, b.T(out)));
}
void ZeroPadRule(Builder& b, const std::string& op, OpKind kind) {
  PadOrCrop(b, op, kind, "padding", 1);
}
void CropRule(Builder& b, const std::string& op, OpKind kind) {
  PadOrCrop(b, op, kind, "cropping", -1);
}

void UpSamplingRule(Builder& b, const std::string& op, OpKind kind) {
  const std::size_t n = SpatialRank(b);
  Dims in = b.in();
  if (!b.known() || in.size() != n + 2) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  const auto size = Ints(b.cfg(), n == 1 ? "size" : "size", n, 2);
  Dims out = in;
  const std::size_t first = ChannelsFirst(b) ? 2 : 1;
  for (std::size_t i = 0; i < n; ++i) out[first + i] = MulDim(in[first + i], size[i]);
  b.Output(b.Add(op, kind, {0}, {}, b.T(out)));
}

void ResizingRule(Builder& b, const std::string& op, OpKind kind) {
  Dims in = b.in();
  if (!b.known() || in.size() != 4) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  Dims out = in;
  const std::size_t first = ChannelsFirst(b) ? 2 : 1;
  out[first] = Static(Int(b.cfg(), "height", -1));
  out[first + 1] = Static(Int(b.cfg(), "width", -1));
  b.Output(b.Add(op, kind, {0}, {}, b.T(out)));
}

void EmbeddingRule(Builder& b, const std::string& op, OpKind kind) {
  const std::int64_t vocab = Int(b.cfg(), "input_dim", -1), dim = Int(b.cfg(), "output_dim", -1);
  const int table = b.Weight("embeddings", {Static(vocab), Static(dim)});
  Dims out = b.in();
  out.push_back(Static(dim));
  const int y = b.Add(op, kind, {0}, {table}, b.known() ? b.T(out) : b.Unknown());
  b.last().weights_first = true;  // Gather(table, ids)
  b.Output(y);
}

// LSTM (4 gates), GRU (3), SimpleRNN (1), as ONNX recurrent ops over [batch, time, features]
// (layout=1). Bidirectional doubles the directions.
void Recurrent(Builder& b, const json& cfg, int gates, int directions, const std::string& merge) {
  static const std::map<int, std::string> kOp = {{4, "LSTM"}, {3, "GRU"}, {1, "RNN"}};
  const std::int64_t units = Int(cfg, "units", -1);
  Dims in = b.in();
  if (!b.known() || in.size() != 3 || units < 0) {
    b.Problem("its input shape is unknown");
    b.Output(b.Add(kOp.at(gates), OpKind::kRecurrent, {0}, {}, b.Unknown()));
    return;
  }
  const Dim g = Static(gates * units);
  const std::vector<int> w = {b.Weight("kernel", {Static(directions), g, in[2]}),
                              b.Weight("recurrent_kernel", {Static(directions), g, Static(units)}),
                              b.Weight("bias", {Static(directions), MulDim(g, 2)})};
  const Dim width = merge == "concat" ? Static(directions * units) : Static(units);
  const bool sequences = Bool(cfg, "return_sequences", false);
  const Dims out = sequences ? Dims{in[0], in[1], width} : Dims{in[0], width};
  b.Output(b.Add(kOp.at(gates), OpKind::kRecurrent, {0}, w, b.T(out),
                 {{"layout", std::int64_t{1}}, {"hidden_size", units}}));
}
void Rnn4(Builder& b, const std::string&, OpKind) { Recurrent(b, b.cfg(), 4, 1, "concat"); }
void Rnn3(Builder& b, const std::string&, OpKind) { Recurrent(b, b.cfg(), 3, 1, "concat"); }
void Rnn1(Builder& b, const std::string&, OpKind) { Recurrent(b, b.cfg(), 1, 1, "concat"); }

void BidirectionalRule(Builder& b, const std::string& op, OpKind kind) {
  const json* inner = Get(b.cfg(), "layer");
  const json* inner_cfg = inner ? Get(*inner, "config") : nullptr;
  const std::string cls = inner ? Str(*inner, "class_name", "") : "";
  const int gates = cls.rfind("LSTM", 0) == 0 || cls == "CuDNNLSTM" ? 4
                    : cls.rfind("GRU", 0) == 0 || cls == "CuDNNGRU" ? 3
                    : cls == "SimpleRNN"                            ? 1
                                                                    : 0;
  if (gates == 0 || inner_cfg == nullptr) {
    b.Problem("it wraps a layer tpu-doctor does not model");
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  Recurrent(b, *inner_cfg, gates, 2, Str(b.cfg(), "merge_mode", "concat"));
}

void MergeRule(Builder& b, const std::string& op, OpKind kind) {
  TensorType out = b.Unknown();
  for (std::size_t i = 0; i < b.num_inputs(); ++i) {
    if (b.known(i) && (!out.shape.rank_known() || b.in(i).size() > out.shape.rank()))
      out = b.T(b.in(i));
  }
  b.Output(b.Add(op, kind, b.AllInputs(), {}, out));
}

void ConcatRule(Builder& b, const std::string& op, OpKind kind) {
  bool all = b.num_inputs() > 0;
  for (std::size_t i = 0; i < b.num_inputs(); ++i)
    all &= b.known(i) && b.in(i).size() == b.in(0).size();
  if (!all || b.in(0).empty()) {
    b.Output(b.Add(op, kind, b.AllInputs(), {}, b.Unknown()));
    return;
  }
  Dims out = b.in(0);
  const std::int64_t axis = Axis(Int(b.cfg(), "axis", -1), out.size());
  if (axis < 0 || static_cast<std::size_t>(axis) >= out.size()) {
    b.Output(b.Add(op, kind, b.AllInputs(), {}, b.Unknown()));
    return;
  }
  const auto a = static_cast<std::size_t>(axis);
  Dim sum = Static(0);
  for (std::size_t i = 0; i < b.num_inputs(); ++i) {
    const Dim d = b.in(i)[a];
    sum = d.is_static() ? AddDim(sum, d.value()) : Dim::Unknown();
  }
  out[a] = sum;
  b.Output(b.Add(op, kind, b.AllInputs(), {}, b.T(out)));
}

// Dot of two [batch, ...] tensors over `axes` (batch dim 0 kept).
void DotRule(Builder& b, const std::string& op, OpKind kind) {
  if (b.num_inputs() != 2 || !b.known(0) || !b.known(1)) {
    b.Output(b.Add(op, kind, {0, 1}, {}, b.Unknown()));
    return;
  }
  Dims x = b.in(0), y = b.in(1);
  auto axes = Ints(b.cfg(), "axes", 2, -1);
  const std::int64_t ax = Axis(axes[0], x.size()), ay = Axis(axes[1], y.size());
  Dims out = {x[0]};
  for (std::size_t i = 1; i < x.size(); ++i)
    if (static_cast<std::int64_t>(i) != ax) out.push_back(x[i]);
  for (std::size_t i = 1; i < y.size(); ++i)
    if (static_cast<std::int64_t>(i) != ay) out.push_back(y[i]);
  if (out.size() == 1) out.push_back(Static(1));
  b.Output(b.Add(op, kind, {0, 1}, {}, b.T(out),
                 {{"lhs_batch_dims", std::vector<std::int64_t>{0}},
                  {"rhs_batch_dims", std::vector<std::int64_t>{0}},
                  {"lhs_contracting_dims", std::vector<std::int64_t>{ax}},
                  {"rhs_contracting_dims", std::vector<std::int64_t>{ay}}}));
}

// Dot-product attention over [batch, T, dim] query and value (key = value): scores, softmax,
// context.
void AttentionRule(Builder& b, const std::string&, OpKind) {
  if (b.num_inputs() < 2 || !b.known(0) || !b.known(1) || b.in(0).size() != 3 ||
      b.in(1).size() != 3) {
    b.Output(b.Add("", OpKind::kMatMul, b.AllInputs(), {}, b.Unknown()));
    return;
  }
  Dims q = b.in(0), v = b.in(1);
  const int key = b.num_inputs() > 2 ? 2 : 1;
  using V = std::vector<std::int64_t>;
  const int s = b.Add("MatMul", OpKind::kMatMul, {0, key}, {}, b.T({q[0], q[1], v[1]}),
                      {{"lhs_batch_dims", V{0}},
                       {"rhs_batch_dims", V{0}},
                       {"lhs_contracting_dims", V{2}},
                       {"rhs_contracting_dims", V{2}}});
  const int p = b.Add("Softmax", OpKind::kSoftmax, {s}, {}, b.T({q[0], q[1], v[1]}));
  b.Output(b.Add("MatMul", OpKind::kMatMul, {p, 1}, {}, b.T({q[0], q[1], v[2]}),
                 {{"lhs_batch_dims", V{0}},
                  {"rhs_batch_dims", V{0}},
                  {"lhs_contracting_dims", V{2}},
                  {"rhs_contracting_dims", V{1}}}));
}

// MultiHeadAttention: query/key/value projections to [B, T, heads, key_dim], scores per head,
// softmax, context, and the output projection back to the query's width.
void MhaRule(Builder& b, const std::string&, OpKind) {
  const std::int64_t heads = Int(b.cfg(), "num_heads", -1), kd = Int(b.cfg(), "key_dim", -1);
  const std::int64_t vd = Int(b.cfg(), "value_dim", kd);
  if (b.num_inputs() < 2 || !b.known(0) || !b.known(1) || b.in(0).size() != 3 ||
      b.in(1).size() != 3 || heads <= 0 || kd <= 0) {
    b.Problem("its inputs are not [batch, time, features] or its config lacks num_heads/key_dim");
    b.Output(b.Add("", OpKind::kMatMul, b.AllInputs(), {}, b.Unknown()));
    return;
  }
  using V = std::vector<std::int64_t>;
  const Dims q = b.in(0), v = b.in(1);
  const int key_in = b.num_inputs() > 2 && b.known(2) ? 2 : 1;
  const Dims k = b.in(static_cast<std::size_t>(key_in));
  const Dim h = Static(heads), dk = Static(kd), dv = Static(vd);
  const Dim width = q[2];
  const bool bias = Bool(b.cfg(), "use_bias", true);
  auto project = [&](int input, const Dims& x, const std::string& name, const Dim& d) {
    std::vector<int> w = {b.Weight(name + "/kernel", {x[2], h, d})};
    if (bias) w.push_back(b.Weight(name + "/bias", {h, d}));
    return b.Add("MatMul", OpKind::kMatMul, {input}, w, b.T({x[0], x[1], h, d}),
                 {{"lhs_contracting_dims", V{2}}, {"rhs_contracting_dims", V{0}}});
  };
  const int pq = project(0, q, "query", dk);
  const int pk = project(key_in, k, "key", dk);
  const int pv = project(1, v, "value", dv);
  const int scores = b.Add("MatMul", OpKind::kMatMul, {pq, pk}, {}, b.T({q[0], h, q[1], k[1]}),
                           {{"lhs_batch_dims", V{0, 2}},
                            {"rhs_batch_dims", V{0, 2}},
                            {"lhs_contracting_dims", V{3}},
                            {"rhs_contracting_dims", V{3}}});
  const int probs = b.Add("Softmax", OpKind::kSoftmax, {scores}, {}, b.T({q[0], h, q[1], k[1]}));
  const int context = b.Add("MatMul", OpKind::kMatMul, {probs, pv}, {}, b.T({q[0], h, q[1], dv}),
                            {{"lhs_batch_dims", V{0, 1}},
                             {"rhs_batch_dims", V{0, 2}},
                             {"lhs_contracting_dims", V{3}},
                             {"rhs_contracting_dims", V{1}}});
  std::vector<int> wo = {b.Weight("attention_output/kernel", {h, dv, width})};
  if (bias) wo.push_back(b.Weight("attention_output/bias", {width}));
  b.Output(b.Add("MatMul", OpKind::kMatMul, {context}, wo, b.T({q[0], q[1], width}),
                 {{"lhs_contracting_dims", V{1, 3}}, {"rhs_contracting_dims", V{0, 1}}}));
}

void NormRule(Builder& b, const std::string& op, OpKind kind) {
  if (!b.known() || b.in().empty()) {
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  const Dims in = b.in();
  const std::int64_t axis = Axis(Int(b.cfg(), "axis", -1), in.size());
  const Dim c = axis >= 0 && static_cast<std::size_t>(axis) < in.size()
                    ? in[static_cast<std::size_t>(axis)]
                    : Dim::Unknown();
  std::vector<int> w;
  if (Bool(b.cfg(), "scale", true)) w.push_back(b.Weight("gamma", {c}));
  if (Bool(b.cfg(), "center", true) && b.call().class_name.find("RMS") == std::string::npos)
    w.push_back(b.Weight("beta", {c}));
  if (op == "BatchNormalization") {
    w.push_back(b.Weight("moving_mean", {c}));
    w.push_back(b.Weight("moving_variance", {c}));
  }
  b.Output(b.Add(op, kind, {0}, w, b.T(in)));
}

void CategoryEncodingRule(Builder& b, const std::string& op, OpKind kind) {
  Dims in = b.in();
  const Dim tokens = Static(Int(b.cfg(), "num_tokens", -1));
  const TensorType out = b.known() && !in.empty() ? b.T({in[0], tokens}) : b.Unknown();
  b.Output(b.Add(op, kind, {0}, {}, out));
}

// StringLookup, IntegerLookup, TextVectorization, Hashing: ids (int64) out.
void LookupRule(Builder& b, const std::string&, OpKind kind) {
  Dims in = b.in();
  const std::int64_t seq = Int(b.cfg(), "output_sequence_length", -1);
  TensorType out = b.known() ? b.T(in, DType::kInt64) : b.Unknown(DType::kInt64);
  if (seq > 0 && b.known() && !in.empty()) out = b.T({in[0], Static(seq)}, DType::kInt64);
  b.Output(b.Add("", kind, {0}, {}, out));
}

// TFOpLambda wraps one TensorFlow op (`function`: "math.add", "nn.relu", "__operators__.add");
// pointwise ones keep their input's shape.
void TfOpLambdaRule(Builder& b, const std::string&, OpKind kind) {
  const std::string fn = Str(b.cfg(), "function", "");
  static const std::map<std::string, std::string> kPointwise = {
      {"math.add", "Add"},         {"__operators__.add", "Add"},
      {"math.subtract", "Sub"},    {"math.multiply", "Mul"},
      {"math.truediv", "Div"},     {"math.divide", "Div"},
      {"nn.relu", "Relu"},         {"nn.relu6", "Clip"},
      {"math.sigmoid", "Sigmoid"}, {"nn.gelu", "Gelu"},
      {"math.tanh", "Tanh"},       {"nn.silu", "Sigmoid"},
      {"math.exp", "Exp"},         {"math.sqrt", "Sqrt"},
      {"math.rsqrt", "Sqrt"},      {"math.square", "Mul"},
      {"math.maximum", "Max"},     {"math.minimum", "Min"},
      {"nn.softmax", "Softmax"},   {"cast", "Cast"}};
  auto it = kPointwise.find(fn);
  if (it != kPointwise.end() && b.known()) {
    b.Output(b.Add(it->second, it->second == "Softmax" ? OpKind::kSoftmax : OpKind::kElementwise,
                   b.AllInputs(), {}, b.T(b.in())));
    return;
  }
  b.Problem("it wraps `tf." + fn + "`, whose output shape tpu-doctor does not infer");
  b.Output(b.Add("", kind, b.AllInputs(), {}, b.Unknown()));
}

void UnknownRule(Builder& b, const std::string& op, OpKind kind) {
  b.Problem("tpu-doctor does not infer this layer's output shape");
  b.Output(b.Add(op, kind, b.AllInputs(), {}, b.Unknown()));
}

// TimeDistributed applies its inner layer to every step: [B, T, ...] → inner over [B*T, ...].
void TimeDistributedRule(Builder& b, const std::string& op, OpKind kind);

const std::map<std::string, Rule>& Rules() {
  static const auto* rules =
      new std::map<std::string, Rule>{{"adaptive_pool", AdaptivePoolRule},
                                      {"attention", AttentionRule},
                                      {"bidirectional", BidirectionalRule},
                                      {"category_encoding", CategoryEncodingRule},
                                      {"center_crop", ResizingRule},
                                      {"concat", ConcatRule},
                                      {"conv", ConvRule},
                                      {"conv_transpose", ConvTransposeRule},
                                      {"cropping", CropRule},
                                      {"dense", DenseRule},
                                      {"depthwise_conv", DepthwiseRule},
                                      {"dot", DotRule},
                                      {"einsum_dense", EinsumDenseRule},
                                      {"embedding", EmbeddingRule},
                                      {"flatten", FlattenRule},
                                      {"global_pool", GlobalPoolRule},
                                      {"identity", Identity},
                                      {"lookup", LookupRule},
                                      {"merge", MergeRule},
                                      {"mha", MhaRule},
                                      {"norm_channel", NormRule},
                                      {"permute", PermuteRule},
                                      {"pool", PoolRule},
                                      {"repeat_vector", RepeatVectorRule},
                                      {"reshape", ReshapeRule},
                                      {"resizing", ResizingRule},
                                      {"rnn1", Rnn1},
                                      {"rnn3", Rnn3},
                                      {"rnn4", Rnn4},
                                      {"separable_conv", SeparableRule},
                                      {"tf_op_lambda", TfOpLambdaRule},
                                      {"time_distributed", TimeDistributedRule},
                                      {"unknown", UnknownRule},
                                      {"upsampling", UpSamplingRule},
                                      {"zero_padding", ZeroPadRule}};
  return *rules;
}

void TimeDistributedRule(Builder& b, const std::string& op, OpKind kind) {
  const json* inner = Get(b.cfg(), "layer");
  const Dims in = b.in();
  if (inner == nullptr || !b.known() || in.size() < 3) {
    b.Problem("it wraps a layer over an unknown shape");
    b.Output(b.Add(op, kind, {0}, {}, b.Unknown()));
    return;
  }
  Dims folded = {MulDims(in[0], in[1])};
  folded.insert(folded.end(), in.begin() + 2, in.end());
  const int fold = b.Add("Reshape", OpKind::kLayout, {0}, {}, b.T(folded, b.in_dtype()));
  const std::string cls = Str(*inner, "class_name", "");
  const KerasLayerInfo& info = LookupKerasLayer(cls);
  const json* inner_cfg = Get(*inner, "config");
  LayerCall call{cls, inner_cfg, {b.T(folded, b.in_dtype())}, b.compute(), b.call().variable};
  const LayerResult r = InferLayer(info.shape_rule, info.canonical, info.info.kind, call);
  // The inner layer's pool: its input is `fold`, its stages follow ours.
  std::vector<int> pool = {fold};
  std::vector<int> weights;
  for (const Weight& w : r.weights) weights.push_back(b.WeightOf(w.name, w.type));
  for (const Stage& st : r.stages) {
    std::vector<int> inputs, ws;
    for (int i : st.inputs) inputs.push_back(pool[static_cast<std::size_t>(i)]);
    for (int w : st.weights) ws.push_back(weights[static_cast<std::size_t>(w)]);
    pool.push_back(b.Add(st.op, st.kind, inputs, ws, st.output, st.attrs));
    b.last().weights_first = st.weights_first;
  }
  if (!r.problem.empty()) b.Problem("its inner `" + cls + "`: " + r.problem);
  const int last = r.outputs.empty() ? fold : pool[static_cast<std::size_t>(r.outputs.front())];
  const int inner_out = r.outputs.empty() ? 0 : r.outputs.front();  // inner pool: 0 is the input
  const TensorType y = inner_out >= 1 && static_cast<std::size_t>(inner_out) <= r.stages.size()
                           ? r.stages[static_cast<std::size_t>(inner_out) - 1].output
                           : b.Unknown();
  TensorType out = b.Unknown(y.dtype);
  if (y.shape.rank_known() && !y.shape.dims().empty()) {
    Dims unfolded = {in[0], in[1]};
    unfolded.insert(unfolded.end(), y.shape.dims().begin() + 1, y.shape.dims().end());
    out = b.T(unfolded, y.dtype);
  }
  b.Output(b.Add("Reshape", OpKind::kLayout, {last}, {}, out));
}

}  // namespace

LayerResult InferLayer(const std::string& rule, const std::string& canonical, OpKind kind,
                       const LayerCall& call) {
  LayerResult result;
  Builder b(call, result);
  auto it = Rules().find(rule);
  (it == Rules().end() ? Rules().at("unknown") : it->second)(b, canonical, kind);
  return result;
}

}  // namespace tpudoctor::keras
