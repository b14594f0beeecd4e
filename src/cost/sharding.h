// The pieces of the estimate that depend on how a step is spread over a slice: which layer a node
// belongs to (for per-layer rematerialisation), and the time of the collectives each kind of
// parallelism adds. Ring collectives over ICI, each chip sending and receiving at `link_bytes_s`:
// an all-reduce moves 2(n-1)/n of the buffer, an all-gather or reduce-scatter (n-1)/n.
#pragma once

#include <string>
#include <string_view>

#include "tpudoctor/cost/estimate.h"

namespace tpudoctor {

// The layer a node's scope names: the scope up to its first component that is a number or ends in
// one (`/model/layers.3/mlp` → `/model/layers.3`, `/encoder/layer/3/attention` →
// `/encoder/layer/3`, `/layer1/layer1.0/conv1` → `/layer1/layer1.0`); empty outside layers.
std::string LayerKey(std::string_view scope);

// Resolves the degrees against the slice: fills a 0 data degree with what remains. Errors: a
// product that does not divide the chips.
Result<Parallelism> ResolveParallelism(Parallelism p, int chips);

struct CollectiveInputs {
  Parallelism parallel;
  double param_count = 0;
  double expert_param_count = 0;  // of param_count, the MoE experts' (expert parallelism shards)
  // How many passes over the layers a step runs (forward; backward; a recomputed forward).
  int passes = 0;
  // The share of the parameters that train (LoRA: its adapters'): only their gradients are
  // reduced (and, with the distributed optimizer, their weights gathered after the update).
  double trainable_share = 1;
  // Whether a recomputed forward runs the attention again (its output not kept:
  // EstimateOptions::keep_attention_output), gathering context parallelism's keys and values.
  bool attention_recomputed = true;
  // Bytes of the tokens one device sends to the experts and takes back per pass over the MoE
  // layers.
  double expert_exchange_bytes = 0;
  // The routing those bytes come from: each token's copies to `experts_per_token` of a layer's
  // `experts`. With `dedup_dispatch` a token crosses to a device once however many of its experts
  // that device holds and, between hosts, to a host once, which forwards it to its devices over
  // NVLink (DeepEP's and HybridEP's kernels behind Megatron's flex dispatcher); without, one copy
  // per routed expert (Megatron's alltoall dispatcher, XLA's ragged all-to-all).
  double experts = 0;
  double experts_per_token = 0;
  bool dedup_dispatch = false;
  double weight_bytes_per_param = 2;  // what the forward all-gather moves (bf16 compute copies)
  double grad_bytes_per_param = 4;
  double tensor_allreduce_bytes = 0;  // per step, forward + backward, before the ring factor
  // The keys and values of every attention op over a context group's whole sequences: what one
  // attention pass of context parallelism gathers (before the ring factor).
  double context_kv_bytes = 0;
  double link_bytes_s = 0;  // 0: interconnect unknown, collectives not counted
  // Between hosts (GPUs: each GPU's share of the scale-out network; 0: none, every group runs at
  // link_bytes_s) and the devices a host holds.
  double scaleout_bytes_s = 0;
  int devices_per_host = 0;
  // Bytes one pipeline stage sends the next per micro-batch and chunk (forward; the gradient
  // comes back the same size).
  double stage_send_bytes = 0;
  // Megatron's distributed optimizer (EstimateOptions::distributed_optimizer): the data replicas
  // and the context group reduce-scatter the gradients and all-gather the updated weights; the
  // context group does not shard the weights.
  bool distributed_optimizer = false;
  bool train = false;
};
struct CollectiveTimes {
  double data_s = 0;     // gradient all-reduce (or reduce-scatter + all-gather) over data replicas
  double fsdp_s = 0;     // parameter all-gathers (forward, backward) + gradient reduce-scatter
  double tensor_s = 0;   // activation all-reduces of tensor parallelism
  double expert_s = 0;   // token all-to-alls of expert parallelism
  double context_s = 0;  // key/value all-gathers (and gradient reduce-scatters) of context p.
  double stage_send_s = 0;  // one micro-batch's sends between pipeline stages, forward + backward
};
CollectiveTimes Collectives(const CollectiveInputs& in);

}  // namespace tpudoctor
