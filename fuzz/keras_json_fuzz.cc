// libFuzzer entry of the `keras_json` target (fuzz/fuzz_targets.h); scripts/fuzz.sh keras_json
// SECONDS runs it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("keras_json", data, size);
}
