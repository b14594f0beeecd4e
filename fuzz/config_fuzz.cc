// libFuzzer entry of the `config` target (fuzz/fuzz_targets.h); scripts/fuzz.sh config SECONDS runs
// it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("config", data, size);
}
