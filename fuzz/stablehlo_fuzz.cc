// libFuzzer target for the stablehlo frontend (build with -DTPUD_BUILD_FUZZERS=ON; run
// scripts/fuzz.sh).
#include "fuzz/load_fuzz.h"
#include "tpudoctor/frontend/stablehlo.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::LoadAndCheck(data, size, "m.mlir", tpudoctor::LoadStableHlo);
}
