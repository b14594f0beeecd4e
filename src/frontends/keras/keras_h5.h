// Reads the Keras model config out of a legacy HDF5 model file (`model.save("m.h5")`): the root
// group's `model_config` attribute, a JSON string, and `keras_version`. The file is opened as an
// in-memory image (HDF5's core driver) with Debian's libhdf5, read-only; weights are never read.
// libhdf5 is not hardened against hostile files, so it runs in a forked child with CPU and
// wall-clock limits: a file that makes it crash or spin is an input error, not a crash or a hang.
// HDF5's own error printing is turned off; every failure is one line.
#pragma once

#include <string>
#include <string_view>

#include "tpudoctor/support/result.h"

namespace tpudoctor::keras {

bool LooksLikeHdf5(std::string_view bytes);

struct H5Config {
  std::string model_config;   // JSON
  std::string keras_version;  // may be empty
};

Result<H5Config> ReadH5Config(std::string_view bytes, const std::string& display_name);

}  // namespace tpudoctor::keras
