// The torch.export frontend: `torch.export.save(ep, "model.pt2")` archives, or the bare
// `models/model.json` inside one → Graph.
//
// The archive is read in memory (never extracted); only its `*/models/*.json` program is parsed,
// never the weights. Each ATen node becomes the canonical op the analyses know
// (data/torch/aten_ops.tsv: `aten.linear` → a MatMul with dot dimension numbers, `aten.nonzero`
// → NonZero) and keeps its own name (`Node::framework_op`); ops with no canonical form stay
// `aten::name`. Shapes and dtypes come from the program's tensor metadata; symbolic sizes (`s77`)
// stay symbols unless --batch/--dim give them values, and unbacked sizes (`u0`, made by
// data-dependent ops) stay symbols. The user's Python frame from each node's stack trace becomes
// its source location, and the nn.Module path its scope. Symbolic-int arithmetic and runtime
// asserts (`sym_size`, `_assert_scalar`, `operator.*`) are not tensor ops and are left out.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

int SniffTorchExport(const Source& source);
Result<LoadedModel> LoadTorchExport(const Source& source, const ShapeOptions& options);

}  // namespace tpudoctor
