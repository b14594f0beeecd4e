// In-process phases of `tpu-doctor check`: loading an ONNX model into the IR, and running every
// check. Run through bench/run.sh (which generates the large models first).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/frontend.h"

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
