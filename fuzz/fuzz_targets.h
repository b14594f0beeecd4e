// The fuzz targets, one table: what each one feeds the bytes to. Each fuzz/<name>_fuzz.cc is the
// libFuzzer entry for one row (scripts/fuzz.sh builds and runs them with ASan and UBSan), and
// tests/fuzz_regressions_test.cc replays testdata/fuzz/<name>/ — every reproducer and every crash
// a fuzzer ever found — through the same rows on every CI run.
//
// A model target loads the bytes as one format and, when they load, runs every check on the graph,
// so an input exercises the IR and the rules as well as the parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/hlo.h"
#include "tpudoctor/frontend/keras.h"
#include "tpudoctor/frontend/model_config.h"
#include "tpudoctor/frontend/onnx.h"
#include "tpudoctor/frontend/stablehlo.h"
#include "tpudoctor/frontend/tf.h"
#include "tpudoctor/frontend/torch_export.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/logs/logs.h"
#include "tpudoctor/script/script.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor::fuzz {

using Loader = Result<LoadedModel> (*)(const Source&, const ShapeOptions&);

inline void LoadAndCheck(std::string_view bytes, const char* name, Loader load) {
  Source source{name, std::string(bytes)};
  auto model = load(source, ShapeOptions{});
  if (model.ok()) (void)RunChecks(model->graph, **FindTarget(kDefaultTarget));
}

// The first byte picks the file name a format is sniffed by (JSON or YAML, ...); the rest is the
// file.
inline std::pair<const char*, std::string_view> Named(std::string_view bytes,
                                                      std::initializer_list<const char*> names) {
  if (bytes.empty()) return {*names.begin(), bytes};
  const std::size_t pick = static_cast<unsigned char>(bytes[0]) % names.size();
  return {*(names.begin() + pick), bytes.substr(1)};
}

inline void Logs(std::string_view bytes) {
  auto d = DiagnoseLogText("fuzz.log", bytes);
  if (!d) return;
  (void)RenderLogsText(*d);
  (void)RenderLogsJson(*d);
}

inline void Job(std::string_view bytes) {
  auto [name, text] = Named(bytes, {"job.yaml", "job.json", "launch.sh"});
  auto spec = ReadJobSpec(Source{name, std::string(text)});
  if (!spec) return;
  JobContext context{*spec};
  const std::vector<Diagnostic> findings = CheckJob(context);
  (void)RenderJobText(*spec, nullptr, findings);
  (void)RenderJobJson(*spec, nullptr, findings);
}

inline void Config(std::string_view bytes) {
  auto [name, text] = Named(bytes, {"config.json", "model.yml"});
  LoadAndCheck(text, name, LoadModelConfig);
}

// A training script or notebook: every rule, then every fix (unsafe ones too), which re-checks the
// fixed text.
inline void Script(std::string_view bytes) {
  auto [name, text] = Named(bytes, {"train.py", "train.ipynb"});
  const Source source{name, std::string(text)};
  const CheckOptions options;
  if (!CheckScript(source, options)) return;
  (void)FixScript(source, options, /*unsafe=*/true);
}

struct Target {
  std::string_view name;
  void (*run)(std::string_view bytes);
};

// Sorted by name.
inline const std::vector<Target>& Targets() {
  static const std::vector<Target> targets = {
      {"config", Config},
      {"hlo", [](std::string_view b) { LoadAndCheck(b, "m.hlo", LoadHlo); }},
      {"job", Job},
      // HDF5 files go to libhdf5 in a forked child (src/frontends/keras/keras_h5.h), which contains
      // its crashes and hangs; under the fuzzer the child's sanitizer reports would be taken for
      // ours, so this target fuzzes the zip and JSON paths. The containment is tested with real
      // libhdf5 failures (testdata/keras/bad_hdf5_*.h5, testdata/repro/h5mut_*.h5).
      {"keras",
       [](std::string_view b) {
         if (!b.starts_with("\x89HDF")) LoadAndCheck(b, "m.keras", LoadKeras);
       }},
      {"keras_json", [](std::string_view b) { LoadAndCheck(b, "model.json", LoadKeras); }},
      {"logs", Logs},
      {"onnx", [](std::string_view b) { LoadAndCheck(b, "m.onnx", LoadOnnx); }},
      {"pt2", [](std::string_view b) { LoadAndCheck(b, "m.pt2", LoadTorchExport); }},
      {"script", Script},
      {"stablehlo", [](std::string_view b) { LoadAndCheck(b, "m.mlir", LoadStableHlo); }},
      {"tf", [](std::string_view b) { LoadAndCheck(b, "m.pb", LoadTensorFlow); }},
      {"tfpbtxt", [](std::string_view b) { LoadAndCheck(b, "m.pbtxt", LoadTensorFlow); }},
  };
  return targets;
}

// The libFuzzer entry of the target `name`.
inline int RunTarget(std::string_view name, const std::uint8_t* data, std::size_t size) {
  for (const Target& t : Targets()) {
    if (t.name == name) t.run(std::string_view(reinterpret_cast<const char*>(data), size));
  }
  return 0;
}

}  // namespace tpudoctor::fuzz
