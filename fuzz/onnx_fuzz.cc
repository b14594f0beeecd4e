// libFuzzer target for the onnx frontend (build with -DTPUD_BUILD_FUZZERS=ON; run scripts/fuzz.sh).
#include "fuzz/load_fuzz.h"
#include "tpudoctor/frontend/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::LoadAndCheck(data, size, "m.onnx", tpudoctor::LoadOnnx);
}
