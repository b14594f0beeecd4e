// libFuzzer target for the tf frontend (m.pb; build with -DTPUD_BUILD_FUZZERS=ON; run
// scripts/fuzz.sh).
#include "fuzz/load_fuzz.h"
#include "tpudoctor/frontend/tf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::LoadAndCheck(data, size, "m.pb", tpudoctor::LoadTensorFlow);
}
