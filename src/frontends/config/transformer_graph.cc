#include <algorithm>
#include <limits>

#include "src/frontends/config/transformer.h"
#include "tpudoctor/knowledge/onnx_ops.h"

namespace tpudoctor::config {
namespace {

using Dims = std::vector<std::int64_t>;

// How far a self-attention's queries reach back (attributes of tpu-doctor's, not ONNX's):
// the `window` keys before each (local attention), or within its aligned `chunk` (Llama 4).
// Zero: the whole (causal) context.
struct Reach {
  std::int64_t window = 0;
  std::int64_t chunk = 0;
};

// An Attention op's attributes: its mask and heads (ONNX's), and its reach.
std::vector<Attribute> AttentionAttrs(bool causal, std::int64_t heads, std::int64_t kv_heads,
                                      Reach reach) {
  std::vector<Attribute> attrs = {{"is_causal", std::int64_t{causal ? 1 : 0}},
                                  {"q_num_heads", heads},
                                  {"kv_num_heads", kv_heads}};
  if (reach.window > 0) attrs.push_back({"window", reach.window});
  if (reach.chunk > 0) attrs.push_back({"chunk", reach.chunk});
  return attrs;
}

// Builds the graph op by op; every tensor's type is known here, so no shape inference runs.
class Builder {
 public:
  Builder(const TransformerSpec& spec, std::int64_t batch, std::int64_t seq)
      : spec_(spec), b_(batch), s_(seq), graph_(spec.family) {}

  Result<Graph> Build();

 private:
  static TensorType Typed(DType dtype, const Dims& dims) {
    TensorType t;
    t.dtype = dtype;
    t.shape = Shape::OfStatic(dims);
    return t;
  }
  static TensorType Float(const Dims& dims) { return Typed(DType::kFloat32, dims); }

  ValueId Input(const std::string& name, DType dtype, const Dims& dims) {
    const ValueId v = graph_.AddValue(name, Typed(dtype, dims), ValueOrigin::kGraphInput);
    graph_.AddInput(v);
    return v;
  }
  ValueId Weight(const std::string& name, const Dims& dims) {
    return graph_.AddValue(scope_ + "/" + name, Float(dims), ValueOrigin::kInitializer);
  }
  // A small int64 constant (a Reshape's target shape), known to the analyses.
  ValueId ShapeConstant(const Dims& dims) {
    const ValueId v = graph_.AddValue(
        "shape" + std::to_string(++constants_),
        Typed(DType::kInt64, {static_cast<std::int64_t>(dims.size())}), ValueOrigin::kInitializer);
    std::vector<Dim> known;
    for (std::int64_t d : dims) known.push_back(Dim::Static(d));
    graph_.mutable_value(v).known_ints = std::move(known);
    return v;
  }
  ValueId Op(const std::string& op, std::vector<ValueId> inputs, TensorType out,
             std::vector<Attribute> attrs = {}) {
    Node n;
    n.name = scope_ + "/" + op + "_" + std::to_string(++ops_);
    n.op_type = op;
    n.kind = LookupOnnxOp("", op).kind;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.loc.scope = scope_;
    const ValueId v = graph_.AddValue(n.name + ":0", std::move(out), ValueOrigin::kNodeOutput);
    n.outputs = {v};
    graph_.AddNode(std::move(n));
    return v;
  }
  const Shape& ShapeOf(ValueId v) const { return graph_.value(v).type.shape; }
  Dims DimsOf(ValueId v) const {
    Dims d;
    for (const Dim& x : ShapeOf(v).dims()) d.push_back(x.value());
    return d;
  }
  ValueId Reshape(ValueId x, const Dims& dims) {
    return Op("Reshape", {x, ShapeConstant(dims)}, Float(dims));
  }

  // x [.., k] times a [k, n] weight (plus a bias).
  ValueId Linear(ValueId x, const std::string& name, std::int64_t n, bool bias) {
    Dims out = DimsOf(x);
    const std::int64_t k = out.back();
    out.back() = n;
    ValueId y = Op("MatMul", {x, Weight(name + ".weight", {k, n})}, Float(out));
    if (bias) y = Op("Add", {y, Weight(name + ".bias", {n})}, Float(out));
    return y;
  }
  ValueId Norm(ValueId x, const std::string& name) {
    const std::int64_t h = DimsOf(x).back();
    const Attribute axis{"axis", std::int64_t{-1}};
    if (spec_.norm == Norm::kRms)
      return Op("RMSNormalization", {x, Weight(name + ".weight", {h})}, Float(DimsOf(x)), {axis});
    std::vector<ValueId> in = {x, Weight(name + ".weight", {h})};
    if (spec_.norm_bias) in.push_back(Weight(name + ".bias", {h}));
    return Op("LayerNormalization", in, Float(DimsOf(x)), {axis});
  }
  ValueId Activation(ValueId x) {
    if (spec_.activation == "gelu") return Op("Gelu", {x}, Float(DimsOf(x)));
    if (spec_.activation == "relu") return Op("Relu", {x}, Float(DimsOf(x)));
    // SiLU: x * sigmoid(x), as ONNX writes it.
    return Op("Mul", {x, Op("Sigmoid", {x}, Float(DimsOf(x)))}, Float(DimsOf(x)));
  }

  ValueId Attention(ValueId x, ValueId memory, bool causal, const std::string& name,
                    Reach reach = {});
  ValueId LatentAttention(ValueId x, bool causal, const std::string& name, Reach reach);
  ValueId Mlp(ValueId x, const std::string& name, std::int64_t ffn);
  ValueId Moe(ValueId x);
  ValueId Experts(ValueId routed);
  ValueId Dropless(ValueId flat, ValueId chosen, ValueId weights);
  ValueId DenseDispatch(ValueId x, ValueId chosen);
  ValueId Block(ValueId x, ValueId memory, bool causal, bool cross, std::int64_t layer = -1);
  ValueId Embed(ValueId ids, ValueId positions, ValueId& table);
  ValueId Loss(ValueId x, ValueId table, ValueId labels);

  const TransformerSpec& spec_;
  std::int64_t b_, s_;
  Graph graph_;
  std::string scope_;
  int ops_ = 0;
  int constants_ = 0;
};

// Q/K/V projections, one attention op over [batch, seq, heads x head_dim] (ONNX `Attention`'s
// 3-D form: heads in attributes), the output projection. `memory`: the encoder output a
// cross-attention reads its keys and values from.
ValueId Builder::Attention(ValueId x, ValueId memory, bool causal, const std::string& name,
                           Reach reach) {
  if (spec_.mla.kv_lora_rank > 0) return LatentAttention(x, causal, name, reach);
  const std::string outer = scope_;
  scope_ += "/" + name;
  // A global layer beside windowed ones may have its own geometry (Gemma 4).
  const bool global = reach.window == 0 && !spec_.windowed.empty() && memory == kNoValue;
  const std::int64_t head_dim =
      global && spec_.global_head_dim > 0 ? spec_.global_head_dim : spec_.head_dim;
  const std::int64_t kv_heads =
      global && spec_.global_kv_heads > 0 ? spec_.global_kv_heads : spec_.kv_heads;
  const std::int64_t qd = spec_.heads * head_dim;
  const std::int64_t kvd = kv_heads * head_dim;
  const bool qkv_bias = spec_.bias || spec_.qkv_bias;
  const ValueId kv_in = memory == kNoValue ? x : memory;
  const ValueId q = Linear(x, "q_proj", qd, qkv_bias);
  const ValueId k = Linear(kv_in, "k_proj", kvd, qkv_bias);
  const ValueId v = global && spec_.global_shared_kv ? k : Linear(kv_in, "v_proj", kvd, qkv_bias);
  const ValueId a = Op("Attention", {q, k, v}, Float(DimsOf(q)),
                       AttentionAttrs(causal, spec_.heads, kv_heads, reach));
  const ValueId o = Linear(a, "o_proj", spec_.hidden, spec_.bias);
  scope_ = outer;
  return o;
}

// Multi-head latent attention as it trains (DeepSeek-V2, section 2.1): each head's keys and
// values expanded from the normalized latent, the shared rotary key repeated for every head and
// joined to the per-head keys. The attention op carries the latent's widths (`latent_kv`,
// `latent_rope`: attributes of tpu-doctor's) for serving, whose engines cache the latent and
// absorb the expansions into the query and the output.
ValueId Builder::LatentAttention(ValueId x, bool causal, const std::string& name, Reach reach) {
  const std::string outer = scope_;
  scope_ += "/" + name;
  const TransformerSpec::LatentAttention& m = spec_.mla;
  const std::int64_t heads = spec_.heads, qk = m.nope_head_dim + m.rope_head_dim;
  const ValueId q =
      m.q_lora_rank > 0
          ? Linear(Norm(Linear(x, "q_a_proj", m.q_lora_rank, spec_.bias), "q_a_layernorm"),
                   "q_b_proj", heads * qk, false)
          : Linear(x, "q_proj", heads * qk, spec_.bias);
  const ValueId latent = Norm(Linear(x, "kv_a_proj", m.kv_lora_rank, spec_.bias), "kv_a_layernorm");
  const ValueId rope = Linear(x, "k_rope_proj", m.rope_head_dim, spec_.bias);
  const ValueId k_nope = Linear(latent, "k_b_proj", heads * m.nope_head_dim, false);
  const ValueId v = Linear(latent, "v_b_proj", heads * m.v_head_dim, false);
  const ValueId rope_per_head =
      Op("Tile", {rope, ShapeConstant({1, 1, heads})}, Float({b_, s_, heads * m.rope_head_dim}));
  const ValueId k = Op("Concat", {k_nope, rope_per_head}, Float({b_, s_, heads * qk}),
                       {{"axis", std::int64_t{-1}}});
  std::vector<Attribute> attrs = AttentionAttrs(causal, heads, heads, reach);
  attrs.push_back({"latent_kv", m.kv_lora_rank});
  attrs.push_back({"latent_rope", m.rope_head_dim});
  const ValueId a = Op("Attention", {q, k, v}, Float({b_, s_, heads * m.v_head_dim}), attrs);
  const ValueId o = Linear(a, "o_proj", spec_.hidden, spec_.bias);
  scope_ = outer;
  return o;
}

ValueId Builder::Mlp(ValueId x, const std::string& name, std::int64_t ffn) {
  const std::string outer = scope_;
  scope_ += "/" + name;
  ValueId h = Activation(Linear(x, spec_.gated_mlp ? "gate_proj" : "up_proj", ffn, spec_.bias));
  if (spec_.gated_mlp) h = Op("Mul", {h, Linear(x, "up_proj", ffn, false)}, Float(DimsOf(h)));
  const ValueId y = Linear(h, "down_proj", spec_.hidden, spec_.bias);
  scope_ = outer;
  return y;
}

// A routed expert MLP: the router picks `experts_per_token` experts per token; each expert runs
// its MLP on the tokens routed to it, and the outputs are weighted by the router and summed per
// token. Dropless (capacity factor 0): tokens x k / experts slots each, gathered and scattered
// by index. With a capacity factor, GShard's dense dispatch (MaxText's `sparse_matmul=False`):
// each expert has a fixed capacity per sequence, and one-hot masks [batch, seq, experts x
// capacity] move the tokens in and out by matmuls ("BSM,BSEC->EBCM", "EBCM,BSEC->BSM").
ValueId Builder::Moe(ValueId x) {
  const std::string outer = scope_;
  scope_ += "/mlp";
  const std::int64_t tokens = b_ * s_, e = spec_.experts, k = spec_.experts_per_token;
  const std::int64_t h = spec_.hidden;
  const ValueId flat = Reshape(x, {tokens, h});
  const ValueId probs = Op("Softmax", {Linear(flat, "gate", e, false)}, Float({tokens, e}));
  Node topk;
  topk.name = scope_ + "/TopK_" + std::to_string(++ops_);
  topk.op_type = "TopK";
  topk.kind = LookupOnnxOp("", "TopK").kind;
  topk.inputs = {probs, ShapeConstant({k})};
  topk.loc.scope = scope_;
  const ValueId weights =
      graph_.AddValue(topk.name + ":0", Float({tokens, k}), ValueOrigin::kNodeOutput);
  const ValueId chosen = graph_.AddValue(topk.name + ":1", Typed(DType::kInt64, {tokens, k}),
                                         ValueOrigin::kNodeOutput);
  topk.outputs = {weights, chosen};
  graph_.AddNode(std::move(topk));
  ValueId y =
      spec_.capacity_factor > 0 ? DenseDispatch(x, chosen) : Dropless(flat, chosen, weights);
  scope_ = outer;
  if (spec_.shared_expert_ffn > 0) {
    const std::int64_t dense_ffn = spec_.shared_expert_ffn;
    y = Op("Add", {y, Reshape(Mlp(x, "shared_expert", dense_ffn), {tokens, h})},
           Float({tokens, h}));
  }
  return Reshape(y, {b_, s_, h});
}

// The experts' MLP on [experts, slots, hidden]: one batched matmul per projection.
ValueId Builder::Experts(ValueId routed) {
  const std::int64_t e = spec_.experts, slots = DimsOf(routed)[1];
  auto expert = [&](ValueId in, const std::string& name, std::int64_t n) {
    const std::int64_t kin = DimsOf(in).back();
    return Op("MatMul", {in, Weight("experts." + name + ".weight", {e, kin, n})},
              Float({e, slots, n}));
  };
  const std::int64_t f = spec_.ffn;
  ValueId act = Activation(expert(routed, spec_.gated_mlp ? "gate_proj" : "up_proj", f));
  if (spec_.gated_mlp) act = Op("Mul", {act, expert(routed, "up_proj", f)}, Float({e, slots, f}));
  return expert(act, "down_proj", spec_.hidden);
}

// Dropless: each expert's tokens x k / experts slots gathered from the tokens routed to it; its
// outputs back to (token, choice), weighted by the router, summed over the choices. [tokens, h].
ValueId Builder::Dropless(ValueId flat, ValueId chosen, ValueId weights) {
  const std::int64_t tokens = b_ * s_, e = spec_.experts, k = spec_.experts_per_token;
  const std::int64_t h = spec_.hidden;
  const std::int64_t slots = (tokens * k + e - 1) / e;
  const ValueId slot_index =
      Op("Reshape", {chosen, ShapeConstant({e, slots})}, Typed(DType::kInt64, {e, slots}));
  const ValueId routed =
      Op("Gather", {flat, slot_index}, Float({e, slots, h}), {{"axis", std::int64_t{0}}});
  const ValueId out = Experts(routed);
  const ValueId per_choice = Reshape(out, {tokens, k, h});
  const ValueId weighted =
      Op("Mul", {per_choice, Reshape(weights, {tokens, k, 1})}, Float({tokens, k, h}));
  return Op("ReduceSum", {weighted, ShapeConstant({1})}, Float({tokens, h}),
            {{"keepdims", std::int64_t{0}}});
}

// Capacity dispatch on [batch, seq, h] x: capacity c = max(ceil(seq x k / e) x F, F) per
// sequence; the combine mask (router weights at each token's slot) and its boolean copy, the
// dispatch mask, are [batch, seq, e x c]. [tokens, h].
ValueId Builder::DenseDispatch(ValueId x, ValueId chosen) {
  const std::int64_t e = spec_.experts, k = spec_.experts_per_token, h = spec_.hidden;
  const double even = static_cast<double>((s_ * k + e - 1) / e);
  const auto c =
      static_cast<std::int64_t>(std::max(even * spec_.capacity_factor, spec_.capacity_factor));
  const std::int64_t slots = e * c;
  const ValueId mask = Op("OneHot", {chosen, ShapeConstant({slots})}, Float({b_, s_, slots}));
  const ValueId mask_t = Op("Transpose", {mask}, Float({b_, slots, s_}),
                            {{"perm", std::vector<std::int64_t>{0, 2, 1}}});
  const ValueId dispatched = Op("MatMul", {mask_t, x}, Float({b_, slots, h}));  // BSEC,BSM->BECM
  const ValueId by_expert =
      Op("Transpose", {Reshape(dispatched, {b_, e, c, h})}, Float({e, b_, c, h}),
         {{"perm", std::vector<std::int64_t>{1, 0, 2, 3}}});
  const ValueId out = Experts(Reshape(by_expert, {e, b_ * c, h}));
  const ValueId by_sequence = Op("Transpose", {Reshape(out, {e, b_, c, h})}, Float({b_, e, c, h}),
                                 {{"perm", std::vector<std::int64_t>{1, 0, 2, 3}}});
  const ValueId combined =
      Op("MatMul", {mask, Reshape(by_sequence, {b_, slots, h})}, Float({b_, s_, h}));
  return Reshape(combined, {b_ * s_, h});
}

// One layer: pre-norm (x + attn(norm(x)), then x + mlp(norm(x))) or post-norm (BERT). A decoder
// layer of an encoder-decoder model (`cross`) attends to the encoder output in between.
ValueId Builder::Block(ValueId x, ValueId memory, bool causal, bool cross, std::int64_t layer) {
  const auto per_layer = [&](const std::vector<bool>& flags) {
    return layer >= 0 && static_cast<std::size_t>(layer) < flags.size() &&
           flags[static_cast<std::size_t>(layer)];
  };
  auto residual = [&](ValueId in, ValueId delta, const std::string& norm_name) {
    ValueId y = Op("Add", {in, delta}, Float(DimsOf(in)));
    return spec_.post_norm ? Norm(y, norm_name) : y;
  };
  auto pre = [&](ValueId in, const std::string& norm_name) {
    return spec_.post_norm ? in : Norm(in, norm_name);
  };
  const Reach reach{per_layer(spec_.windowed) ? spec_.sliding_window : 0,
                    per_layer(spec_.chunked) ? spec_.attention_chunk : 0};
  x = residual(x, Attention(pre(x, "input_layernorm"), kNoValue, causal, "self_attn", reach),
               "attention_layernorm");
  if (cross) {
    x = residual(x, Attention(pre(x, "cross_layernorm"), memory, false, "cross_attn"),
                 "cross_output_layernorm");
  }
  const ValueId ffn_in = pre(x, "post_attention_layernorm");
  const bool dense = spec_.experts == 0 || per_layer(spec_.dense_layers);
  const std::int64_t dense_ffn =
      spec_.experts > 0 && spec_.dense_ffn > 0 ? spec_.dense_ffn : spec_.ffn;
  const ValueId delta = dense ? Mlp(ffn_in, "mlp", dense_ffn) : Moe(ffn_in);
  return residual(x, delta, "output_layernorm");
}

ValueId Builder::Embed(ValueId ids, ValueId positions, ValueId& table) {
  scope_ = "/model/embed_tokens";
  if (table == kNoValue) table = Weight("weight", {spec_.vocab, spec_.hidden});
  const Dims out{b_, s_, spec_.hidden};
  ValueId x = Op("Gather", {table, ids}, Float(out), {{"axis", std::int64_t{0}}});
  if (spec_.learned_positions > 0) {
    scope_ = "/model/embed_positions";
    const ValueId pos =
        Op("Gather", {Weight("weight", {spec_.learned_positions, spec_.hidden}), positions},
           Float({1, s_, spec_.hidden}), {{"axis", std::int64_t{0}}});
    x = Op("Add", {x, pos}, Float(out));
  }
  if (spec_.token_types > 0) {
    scope_ = "/model/embed_token_types";
    x = Op("Add", {x, Weight("weight", {1, 1, spec_.hidden})}, Float(out));
  }
  if (spec_.post_norm) x = Norm(x, "layernorm");
  return x;
}

// The head and the loss: next-token (or masked-token) cross-entropy over the vocabulary, or a
// classifier on the first token.
ValueId Builder::Loss(ValueId x, ValueId table, ValueId labels) {
  scope_ = "/lm_head";
  const std::int64_t tokens = b_ * s_;
  if (spec_.head == Head::kClassifier) {
    const ValueId first = Op("Gather", {x, ShapeConstant({0})}, Float({b_, 1, spec_.hidden}),
                             {{"axis", std::int64_t{1}}});
    const ValueId pooled =
        Op("Tanh", {Linear(first, "pooler", spec_.hidden, true)}, Float({b_, 1, spec_.hidden}));
    const ValueId logits =
        Reshape(Linear(pooled, "classifier", spec_.num_labels, true), {b_, spec_.num_labels});
    return Op("SoftmaxCrossEntropyLoss", {logits, labels}, Float({}));
  }
  if (spec_.head == Head::kMaskedLm)
    x = Norm(Activation(Linear(x, "transform", spec_.hidden, true)), "transform_layernorm");
  else if (!spec_.post_norm)
    x = Norm(x, "final_layernorm");
  const ValueId flat = Reshape(x, {tokens, spec_.hidden});
  ValueId logits;
  if (spec_.tied_embeddings) {
    // The embedding table, transposed inside the dot (no copy).
    logits = Op("Gemm", {flat, table}, Float({tokens, spec_.vocab}), {{"transB", std::int64_t{1}}});
  } else {
    logits = Linear(flat, "weight", spec_.vocab, false);
  }
  return Op("SoftmaxCrossEntropyLoss", {logits, Reshape(labels, {tokens})}, Float({}));
}

Result<Graph> Builder::Build() {
  const ValueId ids = Input("input_ids", DType::kInt32, {b_, s_});
  const ValueId positions =
      spec_.learned_positions > 0 ? Input("position_ids", DType::kInt32, {1, s_}) : kNoValue;
  const ValueId labels =
      Input("labels", DType::kInt32, spec_.head == Head::kClassifier ? Dims{b_} : Dims{b_, s_});
  ValueId table = kNoValue;
  ValueId x = Embed(ids, positions, table);
  ValueId memory = kNoValue;
  if (spec_.decoder_layers > 0) {
    // Encoder-decoder (T5): the encoder stack, then the decoder reads `decoder_input_ids`.
    for (std::int64_t i = 0; i < spec_.layers; ++i) {
      scope_ = "/encoder/layers." + std::to_string(i);
      x = Block(x, kNoValue, false, false);
    }
    scope_ = "/encoder";
    memory = Norm(x, "final_layernorm");
    const ValueId dec_ids = Input("decoder_input_ids", DType::kInt32, {b_, s_});
    x = Embed(dec_ids, kNoValue, table);
    for (std::int64_t i = 0; i < spec_.decoder_layers; ++i) {
      scope_ = "/decoder/layers." + std::to_string(i);
      x = Block(x, memory, true, true);
    }
  } else {
    for (std::int64_t i = 0; i < spec_.layers; ++i) {
      scope_ = "/model/layers." + std::to_string(i);
      x = Block(x, kNoValue, spec_.causal, false, i);
    }
  }
  graph_.AddOutput(Loss(x, table, labels));
  if (auto ok = graph_.Finalize(); !ok) return ok.error();
  return std::move(graph_);
}

}  // namespace

Result<Ok> ValidateSpec(const TransformerSpec& spec, const std::string& what) {
  auto bad = [&](const std::string& why) { return MakeError(what + ": " + why); };
  constexpr std::int64_t kMax = std::int64_t{1} << 24;
  const TransformerSpec::LatentAttention& m = spec.mla;
  if (m.kv_lora_rank != 0) {
    const std::pair<const char*, std::int64_t> latent[] = {{"kv_lora_rank", m.kv_lora_rank},
                                                           {"qk_nope_head_dim", m.nope_head_dim},
                                                           {"qk_rope_head_dim", m.rope_head_dim},
                                                           {"v_head_dim", m.v_head_dim}};
    for (const auto& [name, v] : latent) {
      if (v <= 0 || v > kMax)
        return bad(std::string("latent attention's ") + name + " must be a positive integer");
    }
    if (m.q_lora_rank < 0 || m.q_lora_rank > kMax) return bad("q_lora_rank is out of range");
  }
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"layers", spec.layers},         {"hidden size", spec.hidden},
      {"attention heads", spec.heads}, {"key/value heads", spec.kv_heads},
      {"head dim", spec.head_dim},     {"MLP width", spec.ffn},
      {"vocabulary", spec.vocab}};
  for (const auto& [name, v] : sizes) {
    if (v <= 0) return bad(std::string("the ") + name + " must be a positive integer");
    if (v > kMax)
      return bad(std::string("the ") + name + " (" + std::to_string(v) + ") is too large");
  }
  if (spec.layers > 4096 || spec.decoder_layers > 4096 || spec.decoder_layers < 0)
    return bad("more than 4096 layers");
  if (spec.heads % spec.kv_heads != 0) {
    return bad(std::to_string(spec.heads) + " attention heads do not divide into " +
               std::to_string(spec.kv_heads) + " key/value heads");
  }
  if (spec.attention_chunk < 0 || spec.attention_chunk > (std::int64_t{1} << 40))
    return bad("the attention chunk is out of range");
  if (spec.global_head_dim < 0 || spec.global_head_dim > kMax || spec.global_kv_heads < 0 ||
      spec.global_kv_heads > kMax ||
      (spec.global_kv_heads > 0 && spec.heads % spec.global_kv_heads != 0))
    return bad("the global layers' head width or key/value heads are out of range");
  if (spec.experts < 0 || spec.experts > 4096 || spec.experts_per_token < 0 ||
      (spec.experts > 0 && (spec.experts_per_token < 1 || spec.experts_per_token > spec.experts)))
    return bad("experts per token must be between 1 and the number of experts");
  if (!(spec.capacity_factor >= 0 && spec.capacity_factor <= 64))
    return bad("the MoE capacity factor must be between 0 and 64");
  if (spec.learned_positions < 0 || spec.learned_positions > kMax || spec.shared_expert_ffn < 0 ||
      spec.shared_expert_ffn > kMax || spec.num_labels < 1 || spec.num_labels > kMax)
    return bad("a size is out of range");
  return Ok{};
}

Result<Graph> BuildTransformerGraph(const TransformerSpec& spec, std::int64_t batch,
                                    std::int64_t seq) {
  if (batch < 1 || seq < 1) return MakeError("the batch and the sequence length must be positive");
  // The largest tensors are [batch x seq, vocab] logits and [experts, slots, ffn]; keep every
  // element count well inside int64 and double precision.
  const double tokens = static_cast<double>(batch) * static_cast<double>(seq);
  const double widest =
      static_cast<double>(std::max<std::int64_t>(
          {spec.vocab, spec.ffn, spec.hidden, spec.heads * spec.head_dim,
           spec.heads * (spec.mla.nope_head_dim + spec.mla.rope_head_dim),
           spec.heads * spec.mla.v_head_dim, spec.heads * spec.global_head_dim})) *
      static_cast<double>(std::max<std::int64_t>(1, spec.experts_per_token));
  if (tokens * widest > 1e15)
    return MakeError("batch x seq x width is too large to build (more than 1e15 elements)");
  if (spec.learned_positions > 0 && seq > spec.learned_positions) {
    return MakeError("--seq " + std::to_string(seq) + " is longer than the " +
                     std::to_string(spec.learned_positions) +
                     " positions the model has embeddings for");
  }
  return Builder(spec, batch, seq).Build();
}

}  // namespace tpudoctor::config
