// Source: the bytes of a model file plus the name to show in messages, and the options every
// frontend understands (which symbolic dims to make static).
//
// ReadSource refuses what is not a readable regular file (or a SavedModel folder, read as its
// saved_model.pb), and files too large to be a model description, with a one-line error. Nothing
// here ever follows a path outside the model's folder: IsSafeRelativePath is the gate for
// external-data and archive member paths.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor {

struct Source {
  std::string display_name;  // as the user typed it; never made absolute
  std::string bytes;
  // Fixed-name files beside the model that its format defines (a SavedModel's
  // `keras_metadata.pb`), keyed by that name. Never a path the model itself names.
  std::map<std::string, std::string> siblings = {};
};

// The largest model file read (weights are never needed, so real model descriptions are small;
// ONNX itself cannot exceed 2 GiB).
inline constexpr std::int64_t kMaxSourceBytes = std::int64_t{2} << 30;

// The longest line a text model (HLO, MLIR, pbtxt, JSON, YAML) may have: real files keep lines
// short, even a Keras config written on one line is a few MiB; a longer line is refused while the
// file is read, before it is all in memory.
inline constexpr std::int64_t kMaxTextLineBytes = std::int64_t{64} << 20;

Result<Source> ReadSource(const std::string& path);

// The model files a path names, and the subfolders that could not be read on the way.
struct ModelFiles {
  std::vector<std::string> models;
  std::vector<Error> unreadable;  // one line each: a subfolder the walk could not list
};

// The models a path names: a file or a SavedModel folder is one model; another folder holds the
// model files below it (by extension: .onnx .pt2 .keras .h5 .hdf5 .pb .pbtxt .meta .mlir .hlo
// .hlo.txt, and Python scripts .py and notebooks .ipynb; .json is left out, as most JSON files
// are not models) and SavedModel folders, sorted,
// hidden entries skipped, at most 8 levels deep. Symlinks are followed only to places inside the
// folder, and each folder and file is taken once (by device and inode), so link loops end and no
// model is listed twice. Errors: a folder that cannot be read, or one with no model files.
Result<ModelFiles> FindModels(const std::string& path);

// True when `relative` names a file inside the model's folder: not absolute, no `..` component
// that climbs out, no backslash tricks, no NUL.
bool IsSafeRelativePath(std::string_view relative);

// What the user asked to make static.
struct ShapeOptions {
  std::map<std::string, std::int64_t> dims;  // --dim name=value
  std::optional<std::int64_t> batch;         // --batch N
  // The sequence a model config is built over when `dims` has no `seq` (estimate --serve: the
  // prompt); formats whose inputs carry their own dims ignore it.
  std::optional<std::int64_t> config_seq;
  // How a model config's MoE layers dispatch tokens (--moe-capacity-factor): each expert takes at
  // most ceil(seq x experts-per-token / experts) x F tokens of a sequence, gathered and scattered
  // by one-hot matmuls (GShard; MaxText with sparse_matmul=False). Unset: dropless, each routed
  // token computed once (Hugging Face, vLLM, MaxText's default megablox). Other formats carry
  // their dispatch in the graph and ignore it.
  std::optional<double> moe_capacity_factor;
};

}  // namespace tpudoctor
