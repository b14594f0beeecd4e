#include "src/script/rules/factories.h"
#include "src/script/rules/tfdata.h"

namespace tpudoctor::script {
namespace {

// Whether code names one of tf.data's file readers.
bool NamesFileReader(std::string_view code) {
  for (std::string_view reader : {"TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset",
                                  "CsvDataset", "make_csv_dataset"}) {
    if (code.find(reader) != std::string_view::npos) return true;
  }
  return false;
}

// Whether the interleave only flattens datasets its pipeline made before it without reading a
// file: `interleave(lambda x: x)` over steps none of which names a file reader (tf-agents' replay
// buffer interleaves in-memory shards of itself). There is nothing to read in parallel then.
bool FlattensInMemoryDatasets(const ScriptModel& model, const Call& call) {
  const Node fn = Argument(call, 0, "map_func");
  if (!fn.is("lambda")) return false;
  const Node params = fn.field("parameters");
  const Node body = fn.field("body");
  if (!params || !body || !body.is("identifier") || params.named_count() != 1 ||
      params.named(0).text() != body.text()) {
    return false;
  }
  for (const Call* step : ChainBefore(model, call)) {
    if (NamesFileReader(step->node.text())) return false;
  }
  return true;
}

// dataset.interleave(f) without num_parallel_calls reads its cycle's sources one at a time.
class Pipe005 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PIPE005", "sequential-interleave",
                   "a tf.data interleave without num_parallel_calls reads its sources one at a "
                   "time")
  void Run(const ScriptContext& c) const override {
    for (const Call* call : DatasetCalls(c.model, "interleave")) {
      if (Argument(*call, 3, "num_parallel_calls") || call->splat) continue;
      if (FlattensInMemoryDatasets(c.model, *call)) continue;
      Diagnostic d = c.Finding(code(), Severity::kWarning, call->node,
                               "`.interleave(...)` without num_parallel_calls reads its input "
                               "files one at a time: file reads do not overlap");
      const std::string autotune = c.Autotune();
      d.fix = Fix{"interleave with `num_parallel_calls=tf.data.AUTOTUNE`",
                  FixApplicability::kDisplayOnly};
      if (!autotune.empty()) {
        d.fix->applicability = FixApplicability::kSafe;
        d.fix->edits.push_back(AddKeyword(*call, "num_parallel_calls", autotune));
      }
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePipe005SequentialInterleave() {
  return std::make_unique<Pipe005>();
}

}  // namespace tpudoctor::script
