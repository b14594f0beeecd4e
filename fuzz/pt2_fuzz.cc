// libFuzzer target for the torch_export frontend (m.pt2; build with -DTPUD_BUILD_FUZZERS=ON; run
// scripts/fuzz.sh).
#include "fuzz/load_fuzz.h"
#include "tpudoctor/frontend/torch_export.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::LoadAndCheck(data, size, "m.pt2", tpudoctor::LoadTorchExport);
}
