// The library's entry points: everything `tpu-doctor check` and `estimate` do, as two calls that
// the CLI, the Python module and tests share.
//
//   auto source = ReadSource("model.onnx");          // or a Source built from bytes in memory
//   AnalyzeOptions options;
//   options.estimate_targets = {"tpu-v5e-8", "nvidia-h100"};
//   Result<Report> report = Analyze(*source, options);
//   std::string text = RenderText(*report);          // tpudoctor/report/render.h
//
// Analyze loads the model (detecting its format), runs the selected checks on `target`, and
// estimates memory, step time and cost on `target` and on each of `estimate_targets`. It never
// prints, never throws and never exits: a file it cannot read as a model is a Result error with a
// one-line message. Findings about the model are in the Report.
//
// DiagnoseLogs (tpudoctor/logs/logs.h) is the entry point for TPU logs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/check/check.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/frontend/source.h"
#include "tpudoctor/report/report.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

struct AnalyzeOptions {
  ShapeOptions shapes;       // --batch, --dim
  std::string input_format;  // "" detects it; else one of InputFormats()
  std::string target = kDefaultTarget;
  // train/optimizer/precision (the memory rules and every estimate follow them) and the rule
  // selection.
  CheckOptions check;
  // Targets to estimate on besides `target` (slices allowed: "tpu-v5e-8"), in this order.
  std::vector<std::string> estimate_targets;
  std::optional<double> dataset_size;      // samples per epoch, for epoch time and cost
  std::optional<Calibration> calibration;  // overrides the targets' efficiency factors
  // Price overrides per target (the target's name, e.g. "tpu-v5e"), USD per chip-hour:
  // committed-use or negotiated prices instead of the on-demand list price.
  std::map<std::string, double> prices;
  // How each slice's chips share the step (--parallel; default data parallel) and what the forward
  // pass keeps for the backward pass (--remat).
  Parallelism parallel;
  Remat remat = Remat::kNone;
  Runtime runtime;               // --runtime: how the program runs on a GPU (auto by default)
  bool channels_last = false;    // --channels-last: GPU convolutions in NHWC (EstimateOptions)
  std::string attention_kernel;  // --attention-kernel: a GPU's fused attention (EstimateOptions)
  int slices = 1;                // --slices: identical slices over DCN
  int micro_batches = 1;         // --micro-batches: per replica and training step
  bool distributed_optimizer = false;            // --distributed-optimizer (EstimateOptions)
  bool dedup_expert_dispatch = false;            // --dedup-expert-dispatch (EstimateOptions)
  bool overlap_expert_comm = false;              // --overlap-expert-comm (EstimateOptions)
  bool ring_context = false;                     // --ring-context (EstimateOptions)
  int vocab_tiles = 1;                           // --vocab-tiles (EstimateOptions)
  bool keep_attention_output = false;            // --keep-attention-output (EstimateOptions)
  int lora_rank = 0;                             // --lora (EstimateOptions)
  LoraTargets lora_targets = LoraTargets::kAll;  // --lora-targets (EstimateOptions)
  DcnParallelism dcn = DcnParallelism::kData;    // --dcn: how they share the step
  // --serve: serving figures; the graph is the model at batch 1 over the prompt, and without
  // --parallel each slice is one replica tensor parallel over its chips.
  std::optional<ServingOptions> serve;
  // Flags this run was given but cannot honour, said in the report's notes (shape_notes) rather
  // than dropped: SetServing adds one for a --batch other than 1.
  std::vector<std::string> flag_notes;
  // false leaves the loaded model's IR allocated when Analyze returns, for a command-line run that
  // exits next: the operating system takes the memory back at once, where freeing a 100k-node
  // graph node by node is a tenth of the run (clang's -disable-free does the same).
  bool free_model = true;
};

// Sets a price override for `target` (any name FindSliceTarget takes; stored under the target's own
// name). Errors: an unknown target, a price that is not a dollar figure (negative, above $1M).
Result<Ok> SetPrice(AnalyzeOptions& options, const std::string& target, double usd_per_chip_hour);
// Asks for serving figures: the model is built over one prompt at batch 1 (the prefill step,
// and what a token costs).
void SetServing(AnalyzeOptions& options, const ServingOptions& serve);

// Loads, checks and estimates. Errors: unreadable or unrecognised model bytes, an unknown target,
// a target that lacks the figures an estimate needs.
Result<Report> Analyze(const Source& source, const AnalyzeOptions& options);

// The example model bundled into the binary (what `tpu-doctor check` reads when given none).
Result<Source> BundledExample();

}  // namespace tpudoctor
