// Frontends turn model bytes into a Graph. Each one can Sniff a Source (how sure it is that the
// bytes are its format, 0..100) and Load it. A frontend only translates: what it cannot represent
// becomes a LOAD diagnostic, not a crash; bytes that are not a model are a Result error.
//
// LoadModel picks the frontend by content (falling back to the extension) and is where the CLI
// and the Python module start; LoadModelAs skips the detection.
#pragma once

#include <string>
#include <vector>

#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/frontend/source.h"
#include "tpudoctor/ir/graph.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

struct LoadedModel {
  Graph graph;
  std::string format;                   // "onnx"
  std::string producer;                 // "pytorch 2.11.0", when the file says
  std::vector<Diagnostic> diagnostics;  // LOAD findings
  // Facts about how the shapes were made static ("--batch 8 replaced the static leading dim 1 of
  // input `x`"), shown in the report.
  std::vector<std::string> shape_notes;
};

Result<LoadedModel> LoadModel(const Source& source, const ShapeOptions& options);

// The formats LoadModel can be told to use instead of detecting one: "onnx", "hlo", "stablehlo",
// "pt2", "keras", "tf".
const std::vector<std::string>& InputFormats();

// Whether a frontend may fork a child process to contain a parser that is not hardened against
// hostile files (libhdf5, for legacy Keras `.h5` files). Allowed by default; a host process that
// must not fork (the Python module: forking a threaded interpreter is unsafe) turns it off once,
// and such files are then refused with a one-line error that names the alternative.
void SetChildProcessesAllowed(bool allowed);
bool ChildProcessesAllowed();

// LoadModel with the format forced (`format` empty: detect it). An unknown name is an error.
Result<LoadedModel> LoadModelAs(const Source& source, const ShapeOptions& options,
                                std::string_view format);

}  // namespace tpudoctor
