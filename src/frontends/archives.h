// The zip-based formats, for LoadModel's dispatch: which format an already opened archive holds
// and how to load it, so an archive is opened once. Each frontend implements its pair; the
// public LoadTorchExport/LoadKeras open the archive and call the same functions.
#pragma once

#include <string>

#include "src/support/zip_archive.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

// torch.export: a `models/*.json` program (torch >= 2.6) or `serialized_exported_program.json`.
bool IsTorchExportArchive(const ZipArchive& zip);
Result<LoadedModel> LoadTorchExportArchive(const ZipArchive& zip, const std::string& display_name,
                                           const ShapeOptions& options);

// Keras 3: `config.json` and `metadata.json` at the root.
bool IsKerasArchive(const ZipArchive& zip);
Result<LoadedModel> LoadKerasArchive(const ZipArchive& zip, const std::string& display_name,
                                     const ShapeOptions& options);

}  // namespace tpudoctor
