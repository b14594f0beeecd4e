// libFuzzer entry of the `tfpbtxt` target (fuzz/fuzz_targets.h); scripts/fuzz.sh tfpbtxt SECONDS
// runs it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("tfpbtxt", data, size);
}
