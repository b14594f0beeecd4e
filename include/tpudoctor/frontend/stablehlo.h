// The StableHLO/MHLO frontend: MLIR text from `jax.jit(f).lower(x).as_text()`, `jax.export`,
// torch_xla's StableHLO export, and XLA's MHLO dumps → Graph.
//
// Both op syntaxes are read: the pretty form (`stablehlo.add %a, %b : tensor<4xf32>`) and the
// generic form (`"stablehlo.case"(%i) ({...}) : (tensor<i32>) -> tensor<4xf32>`). Each op becomes
// the HLO instruction XLA translates it to (`dot_general` → `dot`, `case` → `conditional`, ...),
// so every XLA rule and the HLO cost model apply unchanged; regions (while condition/body, case
// branches, reduce combiners) become the node's subgraphs and `func.call` targets are built once
// and shared. `loc(...)` information becomes the node's source location. MLIR bytecode (`.mlirbc`)
// is not read.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

int SniffStableHlo(const Source& source);
Result<LoadedModel> LoadStableHlo(const Source& source, const ShapeOptions& options);

}  // namespace tpudoctor
