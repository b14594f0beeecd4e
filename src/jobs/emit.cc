#include "tpudoctor/jobs/emit.h"

#include <algorithm>
#include <map>

#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using Vars = std::map<std::string, std::string>;

// Replaces each `{{name}}` with its value; templates only name variables that are set.
std::string Fill(std::string_view tmpl, const Vars& vars) {
  std::string out;
  std::size_t pos = 0;
  while (pos < tmpl.size()) {
    const std::size_t open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = tmpl.find("}}", open);
    out.append(tmpl.substr(pos, open - pos));
    out += vars.at(std::string(tmpl.substr(open + 2, close - open - 2)));
    pos = close + 2;
  }
  out.append(tmpl.substr(pos));
  return out;
}

std::string RegionOf(const std::string& zone) { return zone.substr(0, zone.rfind('-')); }

std::string FrameworkName(const Plan& plan, const EmitOptions& options) {
  if (!options.framework.empty()) return options.framework;
  switch (plan.framework) {
    case Framework::kPyTorch:
      return "pytorch";
    case Framework::kKeras:
    case Framework::kTensorFlow:
      return "tensorflow";
    default:
      return "jax";
  }
}

constexpr std::string_view kVertexYaml = R"T(# Vertex AI CustomJob spec: {{summary}}
# gcloud ai custom-jobs create --region={{region}} --display-name={{job}} --config=vertex_custom_job.yaml
workerPoolSpecs:
  - machineSpec:
{{machine_spec}}    replicaCount: 1
    containerSpec:
      imageUri: {{image}}
      command: ["python3", "train.py"]
      args: ["--per_device_batch={{per_device_batch}}", "--global_batch={{global_batch}}"{{flag_args}}]
)T";

constexpr std::string_view kVertexPy = R"T(# Vertex AI CustomJob through the Python SDK: {{summary}}
from google.cloud import aiplatform

aiplatform.init(project="{{project}}", location="{{region}}", staging_bucket="{{bucket}}")

job = aiplatform.CustomJob(
    display_name="{{job}}",
    worker_pool_specs=[
        {
            "machine_spec": { {{machine_spec_py}} },
            # One replica: Vertex AI provisions every host of the TPU slice from the topology.
            "replica_count": 1,
            "container_spec": {
                "image_uri": "{{image}}",
                "command": ["python3", "train.py"],
                "args": ["--per_device_batch={{per_device_batch}}", "--global_batch={{global_batch}}"{{flag_args}}],
            },
        }
    ],
)
job.run()
)T";

constexpr std::string_view kGcloud = R"T(#!/usr/bin/env bash
# Create the TPU VM(s) for: {{summary}}
set -euo pipefail
PROJECT={{project}}
ZONE={{zone}}
NAME={{job}}

# Directly (fails when the zone has no capacity now):
gcloud compute tpus tpu-vm create "$NAME" --project="$PROJECT" --zone="$ZONE" \
  --accelerator-type={{accelerator_type}} --version={{runtime}}

# Or queued (waits for capacity; add --spot or --reserved as your quota allows):
# gcloud compute tpus queued-resources create "$NAME-qr" --project="$PROJECT" --zone="$ZONE" \
#   --node-id="$NAME" --accelerator-type={{accelerator_type}} --runtime-version={{runtime}}

# Run the training script on every host of the slice ({{hosts}}):
gcloud compute tpus tpu-vm scp train.py "$NAME": --project="$PROJECT" --zone="$ZONE" --worker=all
gcloud compute tpus tpu-vm ssh "$NAME" --project="$PROJECT" --zone="$ZONE" --worker=all \
  --command="{{env}}python3 train.py --per_device_batch={{per_device_batch}} --global_batch={{global_batch}}{{flag_line}}"
)T";

constexpr std::string_view kJobSet = R"T(# GKE JobSet: {{summary}}
# Needs a TPU node pool (or Autopilot) with these node labels; kubectl apply -f gke_jobset.yaml
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {{job}}
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  failurePolicy:
    maxRestarts: 0
  replicatedJobs:
    - name: slice
      replicas: 1
      template:
        spec:
          parallelism: {{hosts_count}}
          completions: {{hosts_count}}
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              nodeSelector:
                cloud.google.com/gke-tpu-accelerator: {{gke_accelerator}}
                cloud.google.com/gke-tpu-topology: {{topology}}
              containers:
                - name: train
                  image: {{image}}
                  command: ["python3", "train.py", "--per_device_batch={{per_device_batch}}", "--global_batch={{global_batch}}"{{flag_args}}]
{{container_env}}                  resources:
                    limits:
                      google.com/tpu: {{chips_per_node}}
)T";

constexpr std::string_view kJax = R"T(# JAX training skeleton: {{summary}}
# Mesh axes (data, fsdp, tensor) = ({{data}}, {{fsdp}}, {{tensor}}); remat: {{remat}}.
import argparse

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_batch", type=float, default={{per_device_batch}})
parser.add_argument("--global_batch", type=int, default={{global_batch}})
parser.add_argument("--ici_fsdp_parallelism", type=int, default={{fsdp}})
parser.add_argument("--ici_tensor_parallelism", type=int, default={{tensor}})
parser.add_argument("--remat", default="{{remat}}", choices=["none", "dots", "layer", "offload"])
args = parser.parse_args()

jax.distributed.initialize()  # one process per host; a no-op on a single host
assert jax.device_count() == {{chips}}, f"expected {{chips}} chips, found {jax.device_count()}"
fsdp, tensor = args.ici_fsdp_parallelism, args.ici_tensor_parallelism
data = jax.device_count() // (fsdp * tensor)
mesh = Mesh(np.array(jax.devices()).reshape(data, fsdp, tensor), ("data", "fsdp", "tensor"))

# The batch is split over the data and FSDP axes; every step has the same static shape.
batch_sharding = NamedSharding(mesh, P(("data", "fsdp")))
# Parameters: the first dim of each weight over FSDP, the last over tensor parallelism.
def param_sharding(x):
    if x.ndim >= 2:
        return NamedSharding(mesh, P("fsdp", *([None] * (x.ndim - 2)), "tensor"))
    return NamedSharding(mesh, P())

def model_apply(params, batch):
    raise NotImplementedError("call your model here (flax.linen / nnx / equinox)")

def loss_fn(params, batch):
    return model_apply(params, batch)

{{jax_remat}}
if args.remat == "dots":
    loss_fn = jax.checkpoint(loss_fn, policy=jax.checkpoint_policies.checkpoint_dots)
optimizer = optax.adamw(3e-4)

@jax.jit
def train_step(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

def shard_params(params):
    return jax.tree.map(lambda x: jax.device_put(x, param_sharding(x)), params)

def shard_batch(host_batch):
    # Each host feeds its share: global_batch / process_count samples, bf16 inputs.
    return jax.make_array_from_process_local_data(batch_sharding, host_batch)
)T";

constexpr std::string_view kTorchXla = R"T(# PyTorch/XLA training skeleton: {{summary}}
# PJRT runtime: one process per TPU device, started by xmp.spawn without nprocs.
import argparse
import os

os.environ.setdefault("PJRT_DEVICE", "TPU")

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_batch", type=int, default={{per_device_batch_int}})
parser.add_argument("--global_batch", type=int, default={{global_batch}})
args, _ = parser.parse_known_args()  # the sharding flags are for the JAX skeleton


def build_model():
    raise NotImplementedError("construct your torch.nn.Module here")


def build_dataset():
    raise NotImplementedError("return your torch.utils.data.Dataset here")


def _mp_fn(index):
    device = torch_xla.device()
    world = xr.world_size()
    assert args.global_batch == args.per_device_batch * world, "global batch != per-device x devices"
{{torch_model}}
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    dataset = build_dataset()
    sampler = torch.utils.data.distributed.DistributedSampler(
        dataset, num_replicas=world, rank=xr.global_ordinal(), shuffle=True)
    # drop_last keeps every step's shape static: a smaller last batch would recompile.
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.per_device_batch, sampler=sampler, drop_last=True, num_workers=4)
    for batch in pl.MpDeviceLoader(loader, device):
        optimizer.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = model(*batch)
        loss.backward()
{{torch_step}}


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
)T";

constexpr std::string_view kTf = R"T(# TensorFlow training skeleton: {{summary}}
import argparse

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_batch", type=int, default={{per_device_batch_int}})
args, _ = parser.parse_known_args()

resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
tf.config.experimental_connect_to_cluster(resolver)
tf.tpu.experimental.initialize_tpu_system(resolver)
strategy = tf.distribute.TPUStrategy(resolver)
{{tf_note}}
# The global batch is the per-replica batch times the replicas TPUStrategy runs.
global_batch = args.per_device_batch * strategy.num_replicas_in_sync
tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")


def build_dataset():
    raise NotImplementedError("return your tf.data.Dataset of (features, labels) here")


def build_model():
    raise NotImplementedError("return your tf.keras.Model here")


# drop_remainder=True: every batch has the static shape XLA compiled for.
dataset = build_dataset().shuffle(10_000).batch(global_batch, drop_remainder=True).prefetch(
    tf.data.AUTOTUNE)
with strategy.scope():
    model = build_model()
    model.compile(optimizer=tf.keras.optimizers.AdamW(3e-4), loss="sparse_categorical_crossentropy",
                  steps_per_execution=32)
model.fit(dataset, epochs=1)
)T";

std::string MachineSpecYaml(const TpuGeneration& g, const TpuSlice& s, std::string& py) {
  const std::string machine = g.VertexMachineType(s.chips);
  if (!g.vertex_accelerator_counts.empty()) {
    const int count = g.vertex_accelerator_counts.front();
    py = "\"machine_type\": \"" + machine + "\", \"accelerator_type\": \"" +
         g.vertex_accelerator_type + "\", \"accelerator_count\": " + std::to_string(count);
    return "      machineType: " + machine +
           "\n      acceleratorType: " + g.vertex_accelerator_type +
           "\n      acceleratorCount: " + std::to_string(count) + "\n";
  }
  py = "\"machine_type\": \"" + machine + "\", \"tpu_topology\": \"" + s.topology + "\"";
  return "      machineType: " + machine + "\n      tpuTopology: \"" + s.topology + "\"\n";
}

}  // namespace

Result<std::vector<EmittedFile>> EmitJobFiles(const Plan& plan, const PlanCandidate& c,
                                              const EmitOptions& options) {
  const TpuGeneration& g = *c.generation;
  const TpuSlice& s = *c.slice;
  const Estimate& e = c.estimate;
  const std::string framework = FrameworkName(plan, options);
  if (framework != "jax" && framework != "pytorch" && framework != "tensorflow")
    return MakeError("--framework: `" + framework + "` is not jax, pytorch or tensorflow");
  const std::string zone = options.zone.empty() ? g.zones.front() : options.zone;
  const int hosts = g.Hosts(s.chips);
  Vars v;
  v["summary"] = c.accelerator_type + " (" + s.topology + "), " + ToString(e.parallel) +
                 ", remat " + std::string(NameOf(e.remat)) + ", global batch " +
                 std::to_string(e.global_batch) + " (planned by tpu-doctor for " + plan.model + ")";
  v["region"] = RegionOf(zone);
  v["zone"] = zone;
  v["job"] = options.job_name;
  v["image"] = options.image_uri;
  v["project"] = options.project;
  v["bucket"] = options.bucket;
  v["accelerator_type"] = c.accelerator_type;
  v["runtime"] = framework == "tensorflow" && !g.tf_runtime.empty() ? g.tf_runtime : g.runtime;
  v["topology"] = s.topology;
  v["hosts"] = std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
  v["hosts_count"] = std::to_string(hosts);
  v["chips"] = std::to_string(s.chips);
  v["chips_per_node"] = std::to_string(s.chips / hosts);
  v["global_batch"] = std::to_string(e.global_batch);
  // Per framework device: v2/v3 chips are two devices each (TPUStrategy replicas, torch_xla
  // processes).
  const double pdb = c.per_device_batch();
  v["per_device_batch"] = FormatFixed(pdb, pdb < 1 ? 2 : 0);
  v["per_device_batch_int"] = std::to_string(std::max<std::int64_t>(1, e.global_batch / c.devices));
  // The sharding and remat, as flags the skeleton reads and `check --job` understands.
  std::vector<std::string> flags;
  if (e.parallel.fsdp > 1)
    flags.push_back("--ici_fsdp_parallelism=" + std::to_string(e.parallel.fsdp));
  if (e.parallel.tensor > 1)
    flags.push_back("--ici_tensor_parallelism=" + std::to_string(e.parallel.tensor));
  if (e.remat != Remat::kNone) flags.push_back("--remat=" + std::string(NameOf(e.remat)));
  v["flag_args"] = "";
  v["flag_line"] = "";
  for (const std::string& f : flags) {
    v["flag_args"] += ", \"" + f + "\"";
    v["flag_line"] += " " + f;
  }
  v["data"] = std::to_string(e.parallel.data);
  v["fsdp"] = std::to_string(e.parallel.fsdp);
  v["tensor"] = std::to_string(e.parallel.tensor);
  v["remat"] = std::string(NameOf(e.remat));
  v["env"] = framework == "pytorch" ? "PJRT_DEVICE=TPU " : "";
  v["container_env"] = framework == "pytorch"
                           ? "                  env:\n                    - name: PJRT_DEVICE\n"
                             "                      value: TPU\n"
                           : "";
  v["gke_accelerator"] = g.gke_accelerator;
  v["jax_remat"] =
      e.remat == Remat::kNone ? "# No rematerialisation: the plan fits with every activation kept."
      : e.remat == Remat::kDots || e.remat == Remat::kDotsExceptMlpUp
          ? "loss_fn = jax.checkpoint(loss_fn, policy=jax.checkpoint_policies.checkpoint_dots)"
          : "# Per-layer remat: wrap each layer's apply in jax.checkpoint (nn.remat in Flax)" +
                std::string(e.remat == Remat::kOffload
                                ? ", offloading its input to host memory with\n"
                                  "# "
                                  "policy=jax.checkpoint_policies.offload_dot_with_no_batch_dims("
                                  "\"device\", \"pinned_host\")."
                                : ".");
  const bool sharded = e.parallel.fsdp > 1 || e.parallel.tensor > 1;
  // FSDP (torch_xla's docs): build the model on the CPU and let FSDP move it to the device one
  // wrapped unit at a time (the whole fp32 model on one chip would not fit), and step with
  // `optimizer.step()`: FSDP has already reduce-scattered the gradients, and xm.optimizer_step
  // would all-reduce the shards again (rule PY003).
  v["torch_model"] =
      sharded ? "    # The plan shards parameters (" + ToString(e.parallel) +
                    "): FSDP wraps every submodule of 100M+ parameters and moves each to the\n"
                    "    # device as it shards it; the whole model never sits on one chip.\n"
                    "    import functools\n"
                    "    from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as "
                    "FSDP\n"
                    "    from torch_xla.distributed.fsdp.wrap import size_based_auto_wrap_policy\n"
                    "    policy = functools.partial(size_based_auto_wrap_policy, "
                    "min_num_params=int(1e8))\n"
                    "    model = FSDP(build_model(), auto_wrap_policy=policy, "
                    "compute_dtype=torch.bfloat16)"
              : "    # Data parallel: every device keeps the whole model.\n"
                "    model = build_model().to(device)";
  v["torch_step"] =
      sharded ? "        optimizer.step()  # FSDP reduce-scattered the gradients already"
              : "        xm.optimizer_step(optimizer)  # all-reduces the gradients, then steps";
  v["tf_note"] = e.parallel.fsdp > 1 || e.parallel.tensor > 1
                     ? "# Note: TPUStrategy is data parallel only; the plan's " +
                           ToString(e.parallel) +
                           " needs JAX or PyTorch/XLA (or DTensor) to shard the parameters."
                     : "";
  std::string machine_py;
  v["machine_spec"] = MachineSpecYaml(g, s, machine_py);
  v["machine_spec_py"] = machine_py;

  std::vector<EmittedFile> files;
  // Vertex AI runs v2/v3 only as the 8-core single host (acceleratorCount 8).
  const bool vertex =
      !g.VertexMachineType(s.chips).empty() &&
      (g.vertex_accelerator_counts.empty() || s.chips * 2 == g.vertex_accelerator_counts.front());
  if (vertex) {
    files.push_back({"vertex_custom_job.yaml", Fill(kVertexYaml, v)});
    files.push_back({"vertex_custom_job.py", Fill(kVertexPy, v)});
  }
  files.push_back({"create_tpu_vm.sh", Fill(kGcloud, v)});
  if (!g.gke_accelerator.empty()) files.push_back({"gke_jobset.yaml", Fill(kJobSet, v)});
  files.push_back({"train.py", Fill(framework == "jax"       ? kJax
                                    : framework == "pytorch" ? kTorchXla
                                                             : kTf,
                                    v)});
  return files;
}

}  // namespace tpudoctor
