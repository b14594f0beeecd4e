#include "cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "completion.h"
#include "config.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/support/strings.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor::cli {
namespace {

constexpr std::int64_t kMaxDimValue = std::int64_t{1} << 62;

// `check`'s --format and --fail-on values, for the flags and for pyproject.toml alike.
const std::vector<std::string> kFormats = {"text", "concise", "json", "sarif", "html"};
const std::vector<std::string> kFailOn = {"error", "warning", "note", "never"};
// The other fixed value sets the flags take, checked here and offered by `completion`.
const std::vector<std::string> kColors = {"auto", "always", "never"};
const std::vector<std::string> kTextOrJson = {"text", "json"};
const std::vector<std::string> kObjectives = {"cost", "throughput"};
const std::vector<std::string> kFrameworks = {"jax", "pytorch", "tensorflow"};
const std::vector<std::string> kDcnParallelism = {"data", "fsdp"};

// Each flag's fixed values for shell completion, by subcommand ("" for any).
CompletionValues FlagValues() {
  return {{{"check", "--format"}, kFormats},
          {{"", "--format"}, kTextOrJson},
          {{"", "--fail-on"}, kFailOn},
          {{"", "--color"}, kColors},
          {{"", "--objective"}, kObjectives},
          {{"", "--framework"}, kFrameworks},
          {{"", "--dcn"}, kDcnParallelism},
          {{"", "--kv-cache-dtype"}, KvCacheDtypeNames()},
          {{"", "--attention-kernel"}, AttentionKernelNames()}};
}

// A dim's value: a positive integer up to 2^62 (help shows only `N`, the error says the rest).
// 1..max, said in the flag's own help text rather than as CLI11's `INT:INT in [1 - max]`.
CLI::Validator OneTo(std::int64_t max) {
  return CLI::Validator(
      [max](std::string& value) -> std::string {
        auto n = ParseInt64(value);
        if (!n || *n < 1 || *n > max)
          return "expected an integer from 1 to " + std::to_string(max) + ", got " + value;
        return "";
      },
      "");
}

CLI::Validator PositiveDim() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        auto n = ParseInt64(value);
        if (!n || *n < 1 || *n > kMaxDimValue) return "expected a positive integer, got " + value;
        return "";
      },
      "");
}

// "name=value" → (name, value); value must be a positive integer.
std::optional<std::pair<std::string, std::int64_t>> ParseDimFlag(const std::string& flag) {
  auto eq = flag.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  auto value = ParseInt64(std::string_view(flag).substr(eq + 1));
  if (!value || *value < 1 || *value > kMaxDimValue) return std::nullopt;
  return std::make_pair(flag.substr(0, eq), *value);
}

void AddShapeFlags(CLI::App* cmd, ModelArgs& args, std::vector<std::string>& dim_flags,
                   std::int64_t& batch) {
  cmd->add_option("--batch", batch, "set the batch dim of the inputs")
      ->type_name("N")
      ->check(PositiveDim());
  cmd->add_option("--dim", dim_flags, "make a symbolic dim static: NAME=VALUE (repeatable)");
  cmd->add_option_function<std::int64_t>(
         "--seq", [&args](std::int64_t seq) { args.dims["seq"] = seq; },
         "sequence length (the `seq` dim; model configs default to 2048)")
      ->type_name("N")
      ->check(PositiveDim());
  cmd->add_option_function<double>(
         "--moe-capacity-factor", [&args](double f) { args.moe_capacity_factor = f; },
         "MoE model configs: each expert takes at most this factor x its even share of a "
         "sequence's tokens, dispatched by one-hot matmuls (GShard; MaxText sparse_matmul=False); "
         "default: dropless")
      ->type_name("F")
      ->check(CLI::Range(0.01, 64.0));
  cmd->add_option(
         "--input-format", args.input_format,
         "read the model as this format instead of detecting it: config, hlo, keras, onnx, pt2, "
         "stablehlo or tf")
      ->check(CLI::IsMember(InputFormats()));
}

void AddModelFlags(CLI::App* cmd, ModelArgs& args, std::vector<std::string>& dim_flags,
                   std::int64_t& batch) {
  cmd->add_option("model", args.model, "model file")->required();
  AddShapeFlags(cmd, args, dim_flags, batch);
}

std::optional<std::string> FinishModelArgs(ModelArgs& args,
                                           const std::vector<std::string>& dim_flags,
                                           std::int64_t batch) {
  if (batch > 0) args.batch = batch;
  for (const std::string& f : dim_flags) {
    auto parsed = ParseDimFlag(f);
    if (!parsed) return "--dim " + f + ": expected NAME=VALUE with VALUE a positive integer";
    args.dims[parsed->first] = parsed->second;
  }
  return std::nullopt;
}

// Project settings fill what the command line left at its default.
std::optional<std::string> ApplyConfig(CLI::App* cmd, CheckArgs& check, std::int64_t& batch) {
  std::error_code ec;
  auto config = LoadProjectConfig(std::filesystem::current_path(ec));
  if (!config) return config.error().message;
  const ProjectConfig& c = *config;
  auto unset = [&](const char* flag) { return cmd->count(flag) == 0; };
  if (c.target && unset("--target")) check.target = *c.target;
  if (c.select && unset("--select")) check.select = *c.select;
  if (c.ignore && unset("--ignore")) check.ignore = *c.ignore;
  if (c.fail_on && unset("--fail-on")) check.fail_on = *c.fail_on;
  if (c.format && unset("--format")) check.format = *c.format;
  if (c.train && unset("--train")) check.train = *c.train;
  if (c.optimizer && unset("--optimizer")) check.optimizer = *c.optimizer;
  if (c.precision && unset("--precision")) check.precision = *c.precision;
  if (c.batch && unset("--batch")) batch = *c.batch;
  if (std::find(kFormats.begin(), kFormats.end(), check.format) == kFormats.end())
    return c.path + ": [tool.tpu-doctor] `format` must be text, concise, json, sarif or html";
  if (std::find(kFailOn.begin(), kFailOn.end(), check.fail_on) == kFailOn.end())
    return c.path + ": [tool.tpu-doctor] `fail-on` must be error, warning, note or never";
  return std::nullopt;
}

// "did you mean ...?" for what CLI11 refused: an unknown subcommand (the first argument), or an
// option the chosen subcommand does not have. Empty when nothing is close.
std::string Suggestion(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return "";
  const std::string& first = args.front();
  std::vector<std::string> commands;
  const CLI::App* sub = nullptr;
  for (const CLI::App* candidate : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(candidate->get_name());
    if (candidate->get_name() == first) sub = candidate;
  }
  if (sub == nullptr) {
    if (first.starts_with("-")) return "";
    auto close = ClosestMatch(first, commands);
    return close ? ": `" + first + "` is not a command; did you mean `tpu-doctor " + *close + "`?"
                 : ": `" + first + "` is not a command";
  }
  std::vector<std::string> flags;
  for (const CLI::Option* opt : sub->get_options()) {
    for (const std::string& name : opt->get_lnames()) flags.push_back("--" + name);
  }
  for (const std::string& a : args) {
    if (!a.starts_with("--")) continue;
    const std::string flag = a.substr(0, a.find('='));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    if (auto close = ClosestMatch(flag, flags)) return " (did you mean `" + *close + "`?)";
  }
  return "";
}

}  // namespace

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Terminal& terminal) {
  CLI::App app{"tpu-doctor: will this model run on a Cloud TPU, and if not, exactly why?",
               "tpu-doctor"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tpu-doctor ") + "0.1.0");

  CheckArgs check;
  std::vector<std::string> check_dims;
  std::int64_t check_batch = 0;
  auto* check_cmd = app.add_subcommand(
      "check", "verdict and findings for models on a target (files, SavedModel or other folders)");
  std::vector<std::string> check_models;
  check_cmd->add_option("models", check_models,
                        "model files or folders (default: the bundled example)");
  AddShapeFlags(check_cmd, check.model, check_dims, check_batch);
  check_cmd
      ->add_option("--select", check.select,
                   "run only these rules (codes or prefixes: TPU001, PERF; repeatable)")
      ->delimiter(',');
  check_cmd->add_option("--ignore", check.ignore, "skip these rules (codes or prefixes)")
      ->delimiter(',');
  std::string color = "auto";
  check_cmd
      ->add_option("--color", color,
                   "colour the text report: auto (a terminal without NO_COLOR), always, never")
      ->check(CLI::IsMember(kColors));
  check_cmd->add_option("--target", check.target, "accelerator (see `tpu-doctor targets`)");
  check_cmd->add_option("--job", check.job,
                        "check a Vertex AI CustomJob spec, GKE manifest or launch script (JOB "
                        "rules), and the model given against its TPU slice");
  check_cmd->add_flag("--train", check.train,
                      "memory rules count a training step (gradients, optimizer, activations)");
  check_cmd->add_option("--optimizer", check.optimizer,
                        "with --train: sgd, momentum, adam/adamw, adafactor");
  check_cmd->add_option("--precision", check.precision, "fp32, bf16 (default), fp16, mixed");
  check_cmd
      ->add_option("--format", check.format,
                   "text, concise (one line per finding), json, sarif or html")
      ->check(CLI::IsMember(kFormats));
  check_cmd->add_flag("--statistics", check.statistics,
                      "count the findings per rule instead of listing them");
  check_cmd->add_flag("--ops", check.ops, "text report: list the model's ops by type and status");
  check_cmd
      ->add_option("--fail-on", check.fail_on, "exit 1 at or above: error, warning, note, never")
      ->check(CLI::IsMember(kFailOn));
  check_cmd->add_flag("--fix", check.fix,
                      "Python scripts: apply the safe fixes in place, then report what is left");
  check_cmd->add_flag("--unsafe-fixes", check.unsafe_fixes,
                      "with --fix or --diff: also the fixes that change numerics (float64 -> "
                      "float32)");
  check_cmd->add_flag("--diff", check.diff,
                      "Python scripts: print the fixes as a unified diff and write nothing");

  ModelArgs dump;
  std::vector<std::string> dump_dims;
  std::int64_t dump_batch = 0;
  auto* dump_cmd = app.add_subcommand("dump-ir", "print the model as tpu-doctor's IR text");
  AddModelFlags(dump_cmd, dump, dump_dims, dump_batch);

  std::string targets_format = "text";
  auto* targets_cmd = app.add_subcommand("targets", "list the accelerators tpu-doctor knows");
  targets_cmd->add_option("--format", targets_format, "text or json")
      ->check(CLI::IsMember(kTextOrJson));

  EstimateArgs est;
  std::vector<std::string> est_dims;
  std::int64_t est_batch = 0;
  double est_dataset = 0;
  auto* est_cmd =
      app.add_subcommand("estimate", "memory, step time, throughput and cost per target");
  AddModelFlags(est_cmd, est.model, est_dims, est_batch);
  est_cmd->add_option("--targets", est.targets,
                      "comma-separated targets, slices allowed (tpu-v5e-8)");
  est_cmd->add_flag("--train", est.train, "a training step (forward + backward + optimizer)");
  est_cmd->add_option("--optimizer", est.optimizer, "sgd, momentum, adam/adamw, adafactor");
  est_cmd->add_option(
      "--precision", est.precision,
      "fp32, bf16 (autocast, fp32 master weights), fp16 (autocast with loss scaling), fp8 (bf16 "
      "with fp8 matmuls at the chip's fp8 rate), int8 (bf16 with AQT int8 weight matmuls at the "
      "chip's int8 rate: MaxText's quantization=int8), int8w (serving: weight-only int8, 1-byte "
      "weights dequantized for bf16 matmuls: MaxText's int8w, jetstream-pytorch's and W8A16 "
      "checkpoints), mixed (16-bit weights and gradients beside fp32 master weights: a float16 "
      "network with a multi-precision optimizer, Apex O2), bf16-params (bf16 weights and "
      "optimizer state, no fp32 copy)");
  est_cmd->add_option("--dataset-size", est_dataset, "samples per epoch")
      ->check(CLI::PositiveNumber);
  est_cmd->add_option("--price", est.prices,
                      "TARGET=USD per chip-hour instead of the list price (repeatable; e.g. "
                      "committed-use discounts: tpu-v5e=0.84)");
  est_cmd->add_option("--parallel", est.parallel,
                      "how a slice's chips share the step: data=N,fsdp=N,tp=N,ep=N,cp=N,pp=N,vp=N "
                      "(pp: pipeline stages, vp: interleaved chunks per stage; default: data "
                      "parallel over all chips)");
  est_cmd
      ->add_option("--micro-batches", est.micro_batches,
                   "--train: each replica's step runs N micro-batches of --batch (gradient "
                   "accumulation; the micro-batches a pipeline passes along, Megatron's global "
                   "batch / (micro-batch x data replicas)); default 1")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 20));
  est_cmd->add_flag(
      "--distributed-optimizer", est.distributed_optimizer,
      "--train: Megatron-core's distributed optimizer (DeepSpeed ZeRO-1): 16-bit "
      "weights (fp8 under --precision fp8, as Megatron's FP8 recipes keep and "
      "gather them) and gradients, the fp32 master weights and optimizer state sharded "
      "over the data replicas and context group, gradients reduce-scattered and "
      "weights all-gathered behind compute; context parallelism keeps whole weights");
  est_cmd->add_flag("--dedup-expert-dispatch", est.dedup_expert_dispatch,
                    "with ep: a MoE token crosses to each device, and between hosts to each host, "
                    "once however many of its experts it holds (DeepEP, HybridEP: Megatron's flex "
                    "dispatcher); default one copy per routed expert");
  est_cmd->add_flag("--overlap-expert-comm", est.overlap_expert_comm,
                    "--train with ep: each micro-batch's expert all-to-alls run beside another "
                    "micro-batch's compute (Megatron's overlap_moe_expert_parallel_comm, "
                    "DeepSeek's DualPipe)");
  est_cmd->add_flag("--ring-context", est.ring_context,
                    "with cp: keys and values pass around the context group's ring a chunk at a "
                    "time beside the attention (MaxText's context_parallel_strategy=ring, "
                    "Megatron's p2p context parallelism); default gathered whole (MaxText's "
                    "all_gather)");
  est_cmd
      ->add_option("--lora", est.lora_rank,
                   "--train: LoRA fine-tuning with adapters of rank R on the layers' dense weight "
                   "matmuls, the weights frozen")
      ->check(CLI::Range(1, 65536));
  est_cmd
      ->add_option("--lora-targets", est.lora_targets,
                   "with --lora: which matmuls get adapters: all (attention and MLP, "
                   "Megatron-Bridge's default), attention (Q, K, V, O) or qkv")
      ->check(CLI::IsMember({"all", "attention", "qkv"}));
  est_cmd->add_flag("--keep-attention-output", est.keep_attention_output,
                    "with --remat layer or offload: each layer also keeps its attention's output, "
                    "so the recomputed forward skips the attention (MaxText's remat_policy=custom "
                    "with context=device or offload)");
  est_cmd
      ->add_option("--vocab-tiles", est.vocab_tiles,
                   "--train: the loss head computes its logits in N chunks of tokens (MaxText's "
                   "num_vocab_tiling); default 1")
      ->check(CLI::Range(1, 65536));
  est_cmd->add_option("--remat", est.remat,
                      "activation rematerialisation: none, dots (keep matmul inputs; MaxText's "
                      "`minimal`), layer (keep each layer's input; MaxText's `full`), offload "
                      "(layer inputs in host memory) or save_dot_except_mlpwi (MaxText's: dots "
                      "but the MLP down-projections' inputs, its up-projections run again)");
  est_cmd->add_option("--runtime", est.runtime,
                      "how the program runs on a GPU: eager (one kernel per op), xla (JAX, TF "
                      "jit_compile) or compiled (torch.compile); default: xla for HLO/StableHLO, "
                      "eager otherwise. TPUs always run XLA");
  est_cmd->add_flag("--channels-last", est.channels_last,
                    "the model runs its convolutions channels-last (NHWC: PyTorch's "
                    "memory_format=torch.channels_last, NVIDIA's --memory-format nhwc), which a "
                    "GPU's tensor cores take at the precision's rate; default NCHW");
  est_cmd
      ->add_option("--attention-kernel", est.attention_kernel,
                   "GPUs: the fused attention kernel the model runs, at the share of the peak the "
                   "target lists for it (data/targets): flash-attention-1, flash-attention-2, "
                   "flash-attention-3 (Hopper) or cudnn; default: the runtime's calibration")
      ->check(CLI::IsMember(AttentionKernelNames()));
  est_cmd
      ->add_option("--slices", est.slices,
                   "identical slices over DCN (multislice), data parallel between them unless "
                   "--dcn fsdp")
      ->type_name("N")
      ->check(OneTo(1024));
  est_cmd
      ->add_option("--dcn", est.dcn,
                   "how the slices share the step: data (each holds the whole state, "
                   "gradients all-reduced over DCN) or fsdp (the state sharded over every "
                   "slice's chips too; MaxText's dcn_fsdp_parallelism)")
      ->check(CLI::IsMember(kDcnParallelism));
  est_cmd->add_flag("--serve", est.serve,
                    "serving a decoder LLM: time to first token, time per output token, tokens/s "
                    "per chip and $ per 1M output tokens with continuous batching; the model is "
                    "built over the prompt at batch 1, tensor parallel over the slice unless "
                    "--parallel says otherwise");
  est_cmd->add_option("--prompt-tokens", est.prompt_tokens, "--serve: tokens in per request")
      ->type_name("N")
      ->check(OneTo(std::int64_t{1} << 24));
  est_cmd->add_option("--output-tokens", est.output_tokens, "--serve: tokens out per request")
      ->type_name("N")
      ->check(OneTo(std::int64_t{1} << 24));
  est_cmd
      ->add_option("--concurrency", est.concurrency,
                   "--serve: requests in flight at once over the slice's replicas")
      ->type_name("N")
      ->check(OneTo(std::int64_t{1} << 20));
  est_cmd
      ->add_option("--requests", est.requests,
                   "--serve: an offline job of N requests queued at once (trtllm-bench's dataset, "
                   "vLLM's --num-prompts): --concurrency of them at a time, in waves, the "
                   "throughput the whole job's; default: steady state")
      ->type_name("N")
      ->check(OneTo(std::int64_t{1} << 30));
  est_cmd
      ->add_option("--kv-cache-dtype", est.kv_cache_dtype,
                   "--serve: the KV cache's element type, bf16, fp16, fp8 or int8 (default: the "
                   "compute dtype's)")
      ->check(CLI::IsMember(KvCacheDtypeNames()));
  est_cmd->add_flag("--kv-reads-per-query-head", est.kv_reads_per_query_head,
                    "--serve: the decode kernel reads a grouped-query layer's KV cache once per "
                    "query head (TensorRT-LLM before 0.7, FasterTransformer; modern engines "
                    "read it once per key/value head)");
  est_cmd
      ->add_option("--kv-cache-length", est.kv_cache_length,
                   "--serve: a static KV cache of N tokens a sequence slot, every decode step "
                   "attending over all N (jetstream-pytorch's max_cache_length; default: paged, "
                   "each sequence its own length)")
      ->type_name("N")
      ->check(OneTo(std::int64_t{1} << 24));
  est_cmd->add_flag("--bucketed-prefill", est.bucketed_prefill,
                    "--serve: prefills run one prompt at a time, padded to the next power of two "
                    "(JetStream's prefill buckets), instead of batched");
  est_cmd->add_flag("--replicated-prefill", est.replicated_prefill,
                    "--serve: the data-parallel replicas are one server that splits its decode "
                    "batch over them and runs each prefill on all of them (jetstream-pytorch's "
                    "--shard_on_batch)");
  est_cmd->add_flag("--compare", est.compare,
                    "one screen: which target is cheapest per 1M samples (and per epoch), and by "
                    "how much; without --targets: " +
                        std::string(kCompareTargets));
  est_cmd->add_option("--calibration", est.calibration_file,
                      "efficiency factors JSON (format of data/calibration/)");
  est_cmd->add_option("--format", est.format, "text or json")->check(CLI::IsMember(kTextOrJson));

  PlanArgs plan;
  std::vector<std::string> plan_dims;
  std::int64_t plan_batch = 0;
  auto* plan_cmd = app.add_subcommand(
      "plan", "choose the TPU slice, batch, parallelism and remat for training, and emit the job");
  AddModelFlags(plan_cmd, plan.model, plan_dims, plan_batch);
  // The plan searches the batch: --batch stays accepted (and refused with that reason) but is
  // not offered in the help.
  plan_cmd->get_option("--batch")->group("");
  plan_cmd->add_option(
      "--targets", plan.targets,
      "TPU generations to plan on, comma-separated (default tpu-v5e,tpu-v5p,tpu-v6e)");
  plan_cmd->add_option("--max-chips", plan.max_chips, "the largest slice to consider (chips)")
      ->type_name("N")
      ->check(OneTo(65536));
  plan_cmd->add_option("--budget", plan.budget, "USD per hour the slice may cost at most")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_option("--global-batch", plan.global_batch, "samples per step, exactly")
      ->type_name("N")
      ->check(OneTo(std::int64_t{1} << 30));
  plan_cmd->add_option("--objective", plan.objective, "cost (per 1M samples) or throughput")
      ->check(CLI::IsMember(kObjectives));
  plan_cmd->add_flag("--inference", plan.inference, "plan inference instead of training");
  plan_cmd
      ->add_option("--tokens", plan.tokens,
                   "the job: training tokens (e.g. 2e9); the plan ranks slices by what the job "
                   "costs and says why")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_option("--epochs", plan.epochs, "the job: epochs over --dataset-size samples")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_option("--dataset-size", plan.dataset_size, "samples per epoch (with --epochs)")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_option("--deadline", plan.deadline_hours, "hours the job must finish within")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_flag("--fine-tune", plan.fine_tune,
                     "a fine-tune: global batch at most 512Ki tokens (256 samples) per step");
  plan_cmd->add_option("--optimizer", plan.optimizer, "sgd, momentum, adam/adamw, adafactor");
  plan_cmd->add_option("--precision", plan.precision, PrecisionChoices());
  plan_cmd->add_option("--emit", plan.emit_dir,
                       "write the Vertex AI, gcloud, GKE and training-script files for the choice "
                       "into this folder (all of them or, on any error, none)");
  plan_cmd->add_flag("--force", plan.force,
                     "with --emit: replace files of the same names already in the folder");
  plan_cmd
      ->add_option("--framework", plan.framework,
                   "framework of the emitted training script: jax, pytorch or tensorflow")
      ->check(CLI::IsMember(kFrameworks));
  plan_cmd->add_option("--zone", plan.zone, "zone for the emitted commands");
  plan_cmd->add_option("--format", plan.format, "text or json")->check(CLI::IsMember(kTextOrJson));

  LogsArgs logs;
  auto* logs_cmd = app.add_subcommand(
      "logs", "say why a TPU run died, from its logs (plain or gzip; - for stdin)");
  logs_cmd->add_option("files", logs.files,
                       "log files of one run (several workers' logs are read as one incident)");
  logs_cmd->add_option("--format", logs.format, "text or json")->check(CLI::IsMember(kTextOrJson));
  logs_cmd->add_flag("--signatures", logs.list_signatures,
                     "list the failure signatures tpu-doctor recognises");

  auto* rules_cmd = app.add_subcommand("rules", "list the rules");
  std::string rule_code;
  auto* rule_cmd = app.add_subcommand("rule", "print the documentation of one rule");
  rule_cmd->add_option("code", rule_code, "rule code, e.g. TPU001")->required();

  std::string shell;
  auto* completion_cmd = app.add_subcommand(
      "completion", "print a shell completion script: `source <(tpu-doctor completion bash)`");
  completion_cmd->add_option("shell", shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    out << "tpu-doctor 0.1.0\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    err << "tpu-doctor: " << msg << Suggestion(app, args) << " (see `tpu-doctor --help`)\n";
    return kExitUsage;
  }

  auto usage = [&](const std::string& msg) {
    err << "tpu-doctor: " << msg << "\n";
    return kExitUsage;
  };
  if (check_cmd->parsed()) {
    if (auto bad = ApplyConfig(check_cmd, check, check_batch)) return usage(*bad);
    if (auto bad = FinishModelArgs(check.model, check_dims, check_batch)) return usage(*bad);
    if (!check_models.empty()) {
      check.model.model = check_models.front();
      check.more_models.assign(check_models.begin() + 1, check_models.end());
    }
    for (std::string& code : check.select) code = AsciiUpper(code);
    for (std::string& code : check.ignore) code = AsciiUpper(code);
    check.color =
        color == "always" || (color == "auto" && terminal.stdout_is_tty && !terminal.no_color);
    check.model.free_model = !terminal.exits_after_run;
    return CheckCommand(check, out, err);
  }
  if (dump_cmd->parsed()) {
    if (auto bad = FinishModelArgs(dump, dump_dims, dump_batch)) return usage(*bad);
    return DumpIrCommand(dump, out, err);
  }
  if (est_cmd->parsed()) {
    if (auto bad = FinishModelArgs(est.model, est_dims, est_batch)) return usage(*bad);
    if (est_dataset > 0) est.dataset_size = est_dataset;
    // The money question without --targets compares the priced generations, a chip each, not
    // the one default target.
    if (est.compare && est_cmd->get_option("--targets")->count() == 0)
      est.targets = kCompareTargets;
    est.model.free_model = !terminal.exits_after_run;
    return EstimateCommand(est, out, err);
  }
  if (plan_cmd->parsed()) {
    if (plan_batch > 0) return usage("plan: the batch is what the plan searches; drop --batch");
    if (auto bad = FinishModelArgs(plan.model, plan_dims, plan_batch)) return usage(*bad);
    return PlanCommand(plan, out, err);
  }
  if (logs_cmd->parsed()) {
    if (logs.files.empty() && !logs.list_signatures)
      return usage("logs: give one or more log files, or `-` for stdin");
    return LogsCommand(logs, out, err);
  }
  if (targets_cmd->parsed()) return TargetsCommand(targets_format, out, err);
  if (rules_cmd->parsed()) return RulesCommand(out);
  if (completion_cmd->parsed()) {
    out << CompletionScript(app, shell, FlagValues()).value_or("");
    return kExitOk;
  }
  if (rule_cmd->parsed()) return RuleCommand(rule_code, out, err);
  return usage("no subcommand");
}

}  // namespace tpudoctor::cli
