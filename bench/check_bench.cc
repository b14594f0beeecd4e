// In-process phases of `tpu-doctor check`: loading an ONNX model into the IR, and running every
// check. Run through bench/run.sh (which generates the large models first).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/hlo.h"

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
  std::string out = "HloModule big, entry_computation_layout={(f32[128,512]{1,0})->f32[128,512]{1,0}}\n\n";
  out += "%add_f32 (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
         "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\nENTRY %main (x: f32[128,512]) -> f32[128,512] {\n"
         "  %x = f32[128,512]{1,0} parameter(0)\n";
  std::string prev = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    out += "  %w." + n + " = f32[512,512]{1,0} constant({...})\n";
    out += "  %dot." + n + " = f32[128,512]{1,0} dot(f32[128,512]{1,0} %" + prev + ", f32[512,512]{1,0} %w." + n +
           "), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name=\"jit(f)/layer_" + n +
           "/dot_general\" source_file=\"model.py\" source_line=" + std::to_string(10 + i % 90) + "}\n";
    out += "  %b." + n + " = f32[128,512]{1,0} broadcast(f32[] %zero), dimensions={}\n";
    out += "  %add." + n + " = f32[128,512]{1,0} add(f32[128,512]{1,0} %dot." + n + ", f32[128,512]{1,0} %b." + n +
           "), metadata={op_name=\"jit(f)/layer_" + n + "/add\"}\n";
    out += "  %act." + n + " = f32[128,512]{1,0} tanh(f32[128,512]{1,0} %add." + n + ")\n";
    out += "  %sum." + n + " = f32[128]{0} reduce(f32[128,512]{1,0} %act." + n + ", f32[] %zero), dimensions={1}, to_apply=%add_f32\n";
    prev = "act." + n;
  }
  out += "  %zero = f32[] constant(0)\n  ROOT %out = f32[128,512]{1,0} copy(f32[128,512]{1,0} %" + prev + ")\n}\n";
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

BENCHMARK_CAPTURE(BM_Load, llama_1b, "testdata/models/llama_1b.onnx")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checks, llama_1b, "testdata/models/llama_1b.onnx")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Load, generated_100k, "build/bench/large_100000.onnx")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checks, generated_100k, "build/bench/large_100000.onnx")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpudoctor

BENCHMARK_MAIN();
