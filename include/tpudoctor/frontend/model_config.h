// Model configs as models: a Hugging Face `config.json` (Llama, Mistral, Mixtral, Qwen2/3 and
// their MoE variants, Gemma 1-3, Phi-3, GPT-2, GPT-NeoX, BERT/RoBERTa, DistilBERT, T5) or a
// MaxText model YAML (`base_emb_dim`, `base_num_decoder_layers`, ...) becomes a Graph of the same
// IR every other frontend produces: the embedding, per layer the norms, the Q/K/V/O projections,
// one attention op (ONNX `Attention`, causal for decoders; XLA runs it as a flash/splash kernel,
// so the S x S scores are never stored), the MLP (gated for SwiGLU/GeGLU families, a routed
// expert MLP for MoE), the final norm, the output projection and the token loss. Weights are
// float initializers of the checkpoint's shapes (so parameter counts match the published ones);
// no weight values are ever read. Node scopes name the layer (`/model/layers.3/mlp`), which is
// what per-layer rematerialisation in the estimate groups by.
//
// The sequence length is the symbol `seq` (`--seq N` or `--dim seq=N`; default: the model's
// maximum positions, capped at 2048) and the batch the symbol `batch` (`--batch`; default 1). A
// config that names no family tpu-doctor knows but has the usual keys is read as a Llama-style
// decoder, and the load notes say so.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

// 0 when the bytes are not a model config; kSniffCertain for a JSON object with `model_type` or
// `architectures` (and no Keras `class_name`), or YAML with MaxText's `base_emb_dim` keys.
int SniffModelConfig(const Source& source);
Result<LoadedModel> LoadModelConfig(const Source& source, const ShapeOptions& options);

// The sequence length a config graph was built with (`seq`) when the caller gave none.
inline constexpr std::int64_t kDefaultConfigSeq = 2048;

}  // namespace tpudoctor
