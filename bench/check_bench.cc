// In-process phases of `tpu-doctor check`: loading an ONNX model into the IR, and running every
// check. Run through bench/run.sh (which generates the large models first).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>

#include "src/frontends/hlo/hlo_ast.h"
#include "src/frontends/stablehlo/mlir_parser.h"
#include "src/script/rule.h"
#include "src/script/script_model.h"
#include "src/script/syntax.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/hlo.h"
#include "tpudoctor/frontend/stablehlo.h"

namespace tpudoctor {
namespace {

Source Read(const std::string& rel) {
  auto src = ReadSource(std::string(TPUD_SOURCE_DIR) + "/" + rel);
  if (!src) std::abort();
  return *src;
}

void BM_Load(benchmark::State& state, const char* rel) {
  if (!std::filesystem::exists(std::string(TPUD_SOURCE_DIR) + "/" + rel)) {
    state.SkipWithError("model missing: run bench/run.sh");
    return;
  }
  const Source src = Read(rel);
  for (auto _ : state) {
    auto model = LoadModel(src, {});
    benchmark::DoNotOptimize(model);
  }
}

void BM_Checks(benchmark::State& state, const char* rel) {
  if (!std::filesystem::exists(std::string(TPUD_SOURCE_DIR) + "/" + rel)) {
    state.SkipWithError("model missing: run bench/run.sh");
    return;
  }
  auto model = LoadModel(Read(rel), {});
  const TargetSpec& target = **FindTarget(kDefaultTarget);
  for (auto _ : state) {
    auto findings = RunChecks(model->graph, target);
    benchmark::DoNotOptimize(findings);
  }
}

// A large HLO module: `layers` blocks of dot + bias + activation + a fused computation call,
// with metadata, written the way XLA prints them.
std::string GenerateHlo(int layers) {
  std::string out =
      "HloModule big, entry_computation_layout={(f32[128,512]{1,0})->f32[128,512]{1,0}}\n\n";
  out +=
      "%add_f32 (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] "
      "parameter(1)\n"
      "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\nENTRY %main (x: f32[128,512]) -> "
      "f32[128,512] {\n"
      "  %x = f32[128,512]{1,0} parameter(0)\n";
  std::string prev = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    out += "  %w." + n + " = f32[512,512]{1,0} constant({...})\n";
    out +=
        "  %dot." + n + " = f32[128,512]{1,0} dot(f32[128,512]{1,0} %" + prev +
        ", f32[512,512]{1,0} %w." + n +
        "), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name=\"jit(f)/layer_" +
        n + "/dot_general\" source_file=\"model.py\" source_line=" + std::to_string(10 + i % 90) +
        "}\n";
    out += "  %b." + n + " = f32[128,512]{1,0} broadcast(f32[] %zero), dimensions={}\n";
    out += "  %add." + n + " = f32[128,512]{1,0} add(f32[128,512]{1,0} %dot." + n +
           ", f32[128,512]{1,0} %b." + n + "), metadata={op_name=\"jit(f)/layer_" + n + "/add\"}\n";
    out += "  %act." + n + " = f32[128,512]{1,0} tanh(f32[128,512]{1,0} %add." + n + ")\n";
    out += "  %sum." + n + " = f32[128]{0} reduce(f32[128,512]{1,0} %act." + n +
           ", f32[] %zero), dimensions={1}, to_apply=%add_f32\n";
    prev = "act." + n;
  }
  out += "  %zero = f32[] constant(0)\n  ROOT %out = f32[128,512]{1,0} copy(f32[128,512]{1,0} %" +
         prev + ")\n}\n";
  return out;
}

void BM_LoadHlo(benchmark::State& state) {
  const Source src{"big.hlo", GenerateHlo(static_cast<int>(state.range(0)))};
  for (auto _ : state) {
    auto model = LoadHlo(src, {});
    if (!model) state.SkipWithError(model.error().message.c_str());
    benchmark::DoNotOptimize(model);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.bytes.size()));
  state.counters["MB"] = static_cast<double>(src.bytes.size()) / 1e6;
}
BENCHMARK(BM_LoadHlo)->Arg(100000)->Unit(benchmark::kMillisecond);

// The text parser alone (no IR): the throughput goal of issue 4.
void BM_ParseHlo(benchmark::State& state) {
  const std::string text = GenerateHlo(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto module = hlo::ParseHloText(text);
    if (!module) state.SkipWithError(module.error().message.c_str());
    benchmark::DoNotOptimize(module);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseHlo)->Arg(100000)->Unit(benchmark::kMillisecond);

// The same network as StableHLO (pretty syntax, the way `jax.jit(f).lower(x).as_text()` prints).
std::string GenerateStableHlo(int layers) {
  std::string out = "module @big attributes {mhlo.num_partitions = 1 : i32} {\n";
  out +=
      "  func.func public @main(%x: tensor<128x512xf32>, %w: tensor<512x512xf32>) -> "
      "tensor<128x512xf32> {\n    %zero = stablehlo.constant dense<0.0> : tensor<f32>\n";
  std::string prev = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    out += "    %dot" + n + " = stablehlo.dot_general %" + prev +
           ", %w, contracting_dims = [1] x [0] : (tensor<128x512xf32>, tensor<512x512xf32>) -> "
           "tensor<128x512xf32> loc(#loc" +
           std::to_string(i % 90) + ")\n";
    out += "    %b" + n +
           " = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> "
           "tensor<128x512xf32>\n";
    out += "    %add" + n + " = stablehlo.add %dot" + n + ", %b" + n + " : tensor<128x512xf32>\n";
    out += "    %act" + n + " = stablehlo.tanh %add" + n + " : tensor<128x512xf32>\n";
    out += "    %sum" + n + " = stablehlo.reduce(%act" + n +
           " init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<128x512xf32>, "
           "tensor<f32>) -> tensor<128xf32>\n";
    prev = "act" + n;
  }
  out += "    return %" + prev + " : tensor<128x512xf32>\n  }\n}\n";
  for (int i = 0; i < 90; ++i)
    out += "#loc" + std::to_string(i) + " = loc(\"model.py\":" + std::to_string(10 + i) + ":3)\n";
  return out;
}

void BM_ParseStableHlo(benchmark::State& state) {
  const std::string text = GenerateStableHlo(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto module = mlir::ParseMlirText(text);
    if (!module) state.SkipWithError(module.error().message.c_str());
    benchmark::DoNotOptimize(module);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseStableHlo)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_LoadStableHlo(benchmark::State& state) {
  const Source src{"big.mlir", GenerateStableHlo(static_cast<int>(state.range(0)))};
  for (auto _ : state) {
    auto model = LoadStableHlo(src, {});
    if (!model) state.SkipWithError(model.error().message.c_str());
    benchmark::DoNotOptimize(model);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.bytes.size()));
}
BENCHMARK(BM_LoadStableHlo)->Arg(100000)->Unit(benchmark::kMillisecond);

// `check` latency on the corpus programs: load + every check, as the CLI does (without process
// start-up and rendering).
void BM_CheckProgram(benchmark::State& state, const std::string& path) {
  auto src = ReadSource(path);
  if (!src) std::abort();
  const TargetSpec& target = **FindTarget(kDefaultTarget);
  for (auto _ : state) {
    auto model = LoadModel(*src, {});
    if (!model) state.SkipWithError(model.error().message.c_str());
    auto findings = RunChecks(model->graph, target);
    benchmark::DoNotOptimize(findings);
  }
}

// The phases of `check` on a training script (bench/gen_large_script.py's 10,000 lines): the
// tree-sitter parse, the ScriptModel built over it, and every rule.
constexpr const char* kLargeScript = "build/bench/script_10k.py";

std::optional<script::ScriptText> LargeScript(benchmark::State& state) {
  if (!std::filesystem::exists(std::string(TPUD_SOURCE_DIR) + "/" + kLargeScript)) {
    state.SkipWithError("script missing: run bench/run.sh");
    return std::nullopt;
  }
  auto text = script::ReadScript(Read(kLargeScript));
  if (!text) std::abort();
  return std::move(*text);
}

void BM_ScriptParse(benchmark::State& state) {
  const auto text = LargeScript(state);
  if (!text) return;
  for (auto _ : state) {
    auto syntax = script::Syntax::Parse(text->code);
    benchmark::DoNotOptimize(syntax);
  }
}
BENCHMARK(BM_ScriptParse)->Unit(benchmark::kMillisecond);

void BM_ScriptModel(benchmark::State& state) {
  const auto text = LargeScript(state);
  if (!text) return;
  const auto syntax = script::Syntax::Parse(text->code);
  for (auto _ : state) {
    const script::ScriptModel model(*text, *syntax);
    benchmark::DoNotOptimize(&model);
  }
}
BENCHMARK(BM_ScriptModel)->Unit(benchmark::kMillisecond);

void BM_ScriptRules(benchmark::State& state) {
  const auto text = LargeScript(state);
  if (!text) return;
  const auto syntax = script::Syntax::Parse(text->code);
  const script::ScriptModel model(*text, *syntax);
  for (auto _ : state) {
    DiagnosticSink sink;
    const script::ScriptContext context{model, kLargeScript, sink};
    for (const auto& rule : script::AllScriptRules()) rule->Run(context);
    benchmark::DoNotOptimize(sink);
  }
}
BENCHMARK(BM_ScriptRules)->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_Load, llama_1b, "testdata/models/llama_1b.onnx")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checks, llama_1b, "testdata/models/llama_1b.onnx")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Load, generated_100k, "build/bench/large_100000.onnx")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checks, generated_100k, "build/bench/large_100000.onnx")
    ->Unit(benchmark::kMillisecond);

}  // namespace

void RegisterCorpusPrograms() {
  for (const char* dir : {"testdata/jax", "testdata/xla_real"}) {
    std::vector<std::filesystem::path> files;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(TPUD_SOURCE_DIR) + "/" + dir)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".txt" || ext == ".mlir" || ext == ".hlo") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      benchmark::RegisterBenchmark(("BM_CheckProgram/" + f.filename().string()).c_str(),
                                   BM_CheckProgram, f.string())
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace tpudoctor

int main(int argc, char** argv) {
  tpudoctor::RegisterCorpusPrograms();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
