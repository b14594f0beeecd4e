#include <algorithm>
#include <set>

#include "src/script/rules/factories.h"
#include "src/script/rules/tfdata.h"

namespace tpudoctor::script {
namespace {

// tf.data's CSV and Example readers that batch and prefetch themselves: `prefetch_buffer_size`
// defaults to AUTOTUNE (make_csv_dataset, make_batched_features_dataset); 0 turns it off.
bool ReaderPrefetches(const Call& source) {
  if (!source.name.ends_with("data.experimental.make_csv_dataset") &&
      !source.name.ends_with("data.experimental.make_batched_features_dataset"))
    return false;
  const Node size = source.Keyword("prefetch_buffer_size");
  return !size || IntLiteral(size) != 0;
}

// A training pipeline consumed without a prefetch anywhere in it. A note in scripts: since
// TensorFlow 2.12 tf.data injects a prefetch after a last synchronous transformation by itself
// (OptimizationOptions.inject_prefetch), so the pipeline overlaps there; an explicit prefetch is
// what makes it overlap on every version.
class Pipe003 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PIPE003", "no-prefetch",
                   "a tf.data pipeline without prefetch: input preparation and the training step "
                   "do not overlap")
  void Run(const ScriptContext& c) const override {
    std::set<const void*> reported;
    for (const TrainingInput& input : c.TfData().training_inputs) {
      if (input.prefetched) continue;
      const Node consumed = input.dataset;
      if (c.model.KindOf(consumed) != Kind::kDataset) continue;
      std::vector<const Call*> chain = c.model.Chain(consumed);
      if (chain.empty()) continue;
      const bool prefetches = std::any_of(chain.begin(), chain.end(), [](const Call* call) {
        return call->method == "prefetch" || call->method == "prefetch_to_device" ||
               ReaderPrefetches(*call);
      });
      const Call* last = chain.back();
      if (prefetches || !reported.insert(last->node.id()).second) continue;
      Diagnostic d = c.Finding(code(), Severity::kNote, last->node,
                               "the pipeline ending at `." + last->method +
                                   "(...)` never prefetches: before TensorFlow 2.12 (which "
                                   "injects one) the host builds each batch only after the TPU "
                                   "asks for it");
      const Position used = c.model.Locate(consumed);
      d.notes.push_back("it is consumed at line " + std::to_string(used.line) +
                        (used.cell > 0 ? " of cell " + std::to_string(used.cell) : ""));
      const std::string autotune = c.Autotune();
      d.fix = Fix{"end the pipeline with `.prefetch(tf.data.AUTOTUNE)`",
                  FixApplicability::kDisplayOnly};
      if (!autotune.empty()) {
        d.fix->applicability = FixApplicability::kSafe;
        d.fix->edits.push_back({last->node.end(), last->node.end(), ".prefetch(" + autotune + ")"});
      }
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePipe003NoPrefetch() { return std::make_unique<Pipe003>(); }

}  // namespace tpudoctor::script
