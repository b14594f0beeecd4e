// libFuzzer target for the keras frontend (m.keras; build with -DTPUD_BUILD_FUZZERS=ON; run
// scripts/fuzz.sh).
#include "fuzz/load_fuzz.h"
#include "tpudoctor/frontend/keras.h"

// HDF5 files go to libhdf5 in a forked child (src/frontends/keras/keras_h5.h), which contains its
// crashes and hangs; under the fuzzer the child's sanitizer reports would be taken for ours, so
// this target fuzzes the JSON and zip paths. The containment is tested with real libhdf5 failures
// (testdata/keras/bad_hdf5_*.h5).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 4 && data[0] == 0x89 && data[1] == 'H' && data[2] == 'D' && data[3] == 'F') return 0;
  return tpudoctor::fuzz::LoadAndCheck(data, size, "m.keras", tpudoctor::LoadKeras);
}
