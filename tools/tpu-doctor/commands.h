// One function per subcommand; cli.cc parses flags and dispatches. Each returns an exit code and
// writes its whole output to `out` only after it has succeeded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tpudoctor::cli {

struct ModelArgs {
  std::string model;  // empty: the bundled example
  std::optional<std::int64_t> batch;
  std::map<std::string, std::int64_t> dims;
  std::optional<double> moe_capacity_factor;
  std::string input_format;  // empty: detect from the bytes
  bool free_model = true;    // false when the process exits right after (AnalyzeOptions)
};

// `check`'s settings: flags win over the project's pyproject.toml, which wins over these defaults.
struct CheckArgs {
  ModelArgs model;  // model.model is the first path; `more_models` the rest
  std::vector<std::string> more_models;
  bool train = false;  // the memory rules count training memory
  std::string optimizer = "adam";
  std::string precision = "bf16";
  std::string target = "tpu-v5e";
  std::string format = "text";
  std::string fail_on = "error";
  std::vector<std::string> select;  // rule codes or prefixes
  std::vector<std::string> ignore;
  bool color = false;       // ANSI colours in the text report
  bool statistics = false;  // --statistics: findings counted per rule instead of listed
  bool ops = false;         // --ops: the text report lists the ops by type
  std::string job;  // --job FILE: check a job spec or launch script (and the model against it)
  // Python scripts: apply the safe fixes (--fix; the unsafe ones too with --unsafe-fixes), or
  // print them as a unified diff and write nothing (--diff).
  bool fix = false;
  bool unsafe_fixes = false;
  bool diff = false;
};

struct LogsArgs {
  std::vector<std::string> files;  // "-" is stdin
  std::string format = "text";
  bool list_signatures = false;
};

struct EstimateArgs {
  ModelArgs model;
  std::string targets = "tpu-v5e";  // comma-separated, slice sizes allowed: tpu-v5e-8
  bool train = false;
  std::string optimizer = "adam";
  std::string precision = "bf16";
  std::optional<double> dataset_size;
  std::string calibration_file;        // overrides the targets' calibration
  std::vector<std::string> prices;     // TARGET=USD_PER_CHIP_HOUR overrides (committed-use prices)
  bool compare = false;                // the one-screen cost comparison
  std::string parallel;                // --parallel fsdp=16,tp=4 (empty: data parallel)
  std::string remat = "none";          // none, dots, layer
  std::string runtime = "auto";        // auto, eager, xla, compiled
  bool channels_last = false;          // --channels-last
  std::string attention_kernel;        // --attention-kernel
  int slices = 1;                      // --slices N: multislice over DCN
  int micro_batches = 1;               // --micro-batches N: per replica and step
  bool distributed_optimizer = false;  // --distributed-optimizer (Megatron, ZeRO-1)
  bool dedup_expert_dispatch = false;  // --dedup-expert-dispatch (DeepEP, HybridEP)
  bool overlap_expert_comm = false;    // --overlap-expert-comm
  bool ring_context = false;           // --ring-context: cp's keys and values on a ring
  int vocab_tiles = 1;                 // --vocab-tiles N: the loss head in N chunks
  bool keep_attention_output = false;  // --keep-attention-output: with layer remat
  int lora_rank = 0;                   // --lora R: LoRA fine-tuning
  std::string lora_targets = "all";    // --lora-targets all|attention|qkv
  std::string dcn = "data";            // --dcn data|fsdp: how the slices share the step
  bool serve = false;                  // --serve: serving figures (prefill, decode, tokens/s)
  std::int64_t prompt_tokens = 1024;
  std::int64_t output_tokens = 1024;
  std::int64_t concurrency = 1;
  std::int64_t requests = 0;   // --requests: an offline job of N requests
  std::string kv_cache_dtype;  // --kv-cache-dtype bf16|fp16|fp8 (empty: the compute dtype's)
  bool kv_reads_per_query_head = false;  // --kv-reads-per-query-head (pre-XQA decode kernels)
  std::int64_t kv_cache_length = 0;      // --kv-cache-length N: a static cache (0: paged)
  bool bucketed_prefill = false;         // --bucketed-prefill: one prompt at a time, padded
  bool replicated_prefill = false;  // --replicated-prefill: one prefill stream for the replicas
  std::string format = "text";
};

struct PlanArgs {
  ModelArgs model;
  std::string targets;  // comma-separated generations; empty: v5e, v5p, v6e
  int max_chips = 256;
  double budget = 0;              // USD per hour; 0: none
  std::int64_t global_batch = 0;  // 0: searched (capped)
  std::string objective = "cost";
  bool inference = false;
  std::string optimizer = "adam";
  std::string precision = "bf16";
  std::string format = "text";
  std::string emit_dir;   // --emit DIR
  bool force = false;     // --force: --emit may replace existing files
  std::string framework;  // for the emitted script; empty: the model's
  std::string zone;
  double tokens = 0;  // --tokens: the job's training tokens (0: no job)
  double epochs = 0;  // --epochs with --dataset-size: the job in samples
  double dataset_size = 0;
  double deadline_hours = 0;  // --deadline: the job must finish within this (0: none)
  bool fine_tune = false;     // --fine-tune: a fine-tune's global batch
};

int PlanCommand(const PlanArgs& args, std::ostream& out, std::ostream& err);
int EstimateCommand(const EstimateArgs& args, std::ostream& out, std::ostream& err);
int LogsCommand(const LogsArgs& args, std::ostream& out, std::ostream& err);
int CheckCommand(const CheckArgs& args, std::ostream& out, std::ostream& err);
int DumpIrCommand(const ModelArgs& args, std::ostream& out, std::ostream& err);
int TargetsCommand(const std::string& format, std::ostream& out, std::ostream& err);
int RulesCommand(std::ostream& out);
int RuleCommand(const std::string& code, std::ostream& out, std::ostream& err);

}  // namespace tpudoctor::cli

// What `estimate --compare` compares when no --targets are given: the TPU generations and GPUs
// with a list price, a chip each, so that throughput compares too (a v5p is sold from four chips,
// v5p-8; its price and speed per chip are the same).
inline constexpr const char* kCompareTargets =
    "tpu-v5e,tpu-v5p,tpu-v6e,nvidia-a100-80gb,nvidia-h100,nvidia-h200,nvidia-b200";
