#include <algorithm>

#include "src/script/rules/factories.h"
#include "src/script/rules/tfdata.h"
#include "src/script/rules/torch_xla.h"
#include "src/script/rules/value_flow.h"

namespace tpudoctor::script {
namespace {

// Whether the chain repeats forever before this point: `repeat()` with no count, or a count of
// None or -1 (tf.data.Dataset.repeat: "if count is None or -1, the dataset is repeated
// indefinitely"), given or a parameter's default no call here overrides (a library function's
// `num_repeat=-1`).
bool IsMinusOne(Node n) {
  return n.is("unary_operator") && n.field("operator").text() == "-" &&
         IntLiteral(n.field("argument")) == 1;
}

bool RepeatsForever(const ScriptModel& model, const std::vector<const Call*>& chain) {
  for (const Call* c : chain) {
    if (c->method != "repeat") continue;
    Node count = Argument(*c, 0, "count");
    if (count.is("identifier")) {
      if (const Node given = model.DefaultUnlessPassed(count)) count = given;
    }
    if (!count ? !c->splat : IsNone(count) || IsMinusOne(count)) return true;
  }
  return false;
}

// Whether a DataLoader shuffles (a training loader): `shuffle=True`, or a sampler that does —
// `RandomSampler`, or a `DistributedSampler` whose shuffle is on (its default).
bool Shuffles(const ScriptModel& model, const Call& loader) {
  if (BoolLiteral(Argument(loader, 2, "shuffle")) == true) return true;
  const Node sampler = model.Resolve(Argument(loader, 3, "sampler"));
  const Call* made = sampler.is("call") ? model.CallAt(sampler) : nullptr;
  if (made == nullptr) return false;
  if (made->name == "torch.utils.data.RandomSampler" ||
      made->name == "torch.utils.data.sampler.RandomSampler") {
    return true;
  }
  if (made->name == "torch.utils.data.distributed.DistributedSampler" ||
      made->name == "torch.utils.data.DistributedSampler") {
    Node shuffle = made->Keyword("shuffle");
    return !shuffle || BoolLiteral(shuffle) == true;
  }
  return false;
}

// What a loop may wrap a loader in to iterate it: torch_xla's device loaders, progress bars,
// enumerate/iter.
bool WrapsForIteration(const Call& c) {
  return c.method == "ParallelLoader" || c.method == "MpDeviceLoader" ||
         c.method == "per_device_loader" || c.method == "tqdm" || c.method == "enumerate" ||
         c.method == "iter";
}

bool OnlyLookedAt(const ScriptModel& model, Node assignment, const std::vector<Node>& step_loops,
                  int depth);

// Whether an expression is given as a keyword argument that names evaluation input: a trainer's
// `eval_dataloader=` (Composer), `val_dataloaders=` (Lightning's fit), `test_loader=`. The API
// evaluates on it, whatever its sampler does.
bool GivenForEvaluation(Node expr) {
  const Node keyword = expr.parent();
  if (!keyword.is("keyword_argument") || keyword.field("value") != expr) return false;
  const std::string_view name = keyword.field("name").text();
  for (std::string_view role : {"eval", "val", "valid", "validation", "test"}) {
    if (name == role || (name.starts_with(role) && name.substr(role.size()).starts_with("_"))) {
      return true;
    }
  }
  return false;
}

// Whether a use of a loader (or of a wrapper around it) is the iterable of a loop that takes no
// training step, through the wrappers such a loop iterates and the names they are assigned to.
bool IteratedWithoutStep(const ScriptModel& model, Node use, const std::vector<Node>& step_loops,
                         int depth) {
  constexpr int kMaxRebinds = 4;
  for (Node n = use;;) {
    if (GivenForEvaluation(n)) return true;
    const Node parent = n.parent();
    const Node call = parent.is("argument_list")                              ? parent.parent()
                      : parent.is("attribute") && parent.field("object") == n ? parent.parent()
                                                                              : Node();
    if (const Call* wrapper = call ? model.CallAt(call) : nullptr) {
      if (!WrapsForIteration(*wrapper)) return false;
      n = call;
    } else if (parent.is("for_statement") && parent.field("right") == n) {
      return std::none_of(step_loops.begin(), step_loops.end(),
                          [&](Node step) { return Within(step, parent); });
    } else if (parent.is("assignment") && parent.field("right") == n &&
               parent.field("left").is("identifier")) {
      return depth < kMaxRebinds && OnlyLookedAt(model, parent, step_loops, depth + 1);
    } else {
      return false;
    }
  }
}

// Whether a DataLoader's batches are only looked at: every use of the name it is assigned to is
// iterated by a loop that takes no training step (no `.backward()` in it), directly or through
// the wrappers such a loop iterates, or given to a trainer as its evaluation input. An evaluation
// loader that shuffles (a sampler with shuffle=True) is still an evaluation loader: dropping its
// last batch would change the metric.
bool OnlyLookedAt(const ScriptModel& model, Node assignment, const std::vector<Node>& step_loops,
                  int depth) {
  bool used = false;
  const bool looked_at = EveryUse(model, assignment, [&](Node use) {
    used = true;
    return IteratedWithoutStep(model, use, step_loops, depth);
  });
  return used && looked_at;
}

// Sets a boolean argument to True: adds the keyword, or replaces a literal False.
TextEdit MakeTrue(const Call& call, Node given, std::string_view keyword) {
  return given ? Replace(given, "True") : AddKeyword(call, keyword, "True");
}

// A batch whose last one may be smaller: tf.data's batch/padded_batch without
// drop_remainder=True in a training pipeline (it shuffles, does not repeat forever before
// batching, and is trained on or returned by a function), and (in torch_xla scripts) a shuffling
// DataLoader without drop_last=True. In source it is a warning, not the graph rule's error: TF2's
// TPUStrategy pads a partial batch by default
// (tf.distribute.RunOptions.experimental_enable_dynamic_batch_size), and torch_xla compiles the
// step again for it.
class Pipe004 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PIPE004", "partial-batch",
                   "a batch without drop_remainder=True / drop_last=True")
  void Run(const ScriptContext& c) const override {
    const auto& training = c.TfData().training_pipeline_calls;
    for (const auto& [method, index] : {std::pair{"batch", 1}, std::pair{"padded_batch", 3}}) {
      for (const Call* call : DatasetCalls(c.model, method)) {
        Node drop = Argument(*call, index, "drop_remainder");
        if (drop ? BoolLiteral(drop) != false : call->splat) continue;
        // Only a training pipeline (one that shuffles) that ends: dropping the last batch of an
        // evaluation or prediction input would lose examples, and after an endless repeat()
        // every batch is full.
        const std::vector<const Call*> before = ChainBefore(c.model, *call);
        if (!HasStep(before, "shuffle") || RepeatsForever(c.model, before)) continue;
        if (!training.contains(call->node.id())) continue;
        // A batch of one is never partial.
        const Node size = Argument(*call, 0, "batch_size");
        if (IntLiteral(c.model.Resolve(size)) == 1) continue;
        if (size.is("identifier") && IntLiteral(c.model.DefaultWhenOmitted(size)) == 1) continue;
        Diagnostic d = c.Finding(
            code(), Severity::kWarning, call->node,
            "`." + call->method +
                "(...)` keeps the last, smaller batch: its batch dim is unknown (None), so the "
                "TPU step is compiled for one more shape or, where the shape must be static, "
                "fails");
        d.fix = Fix{"batch with `drop_remainder=True`",
                    FixApplicability::kSafe,
                    {MakeTrue(*call, drop, "drop_remainder")}};
        c.Add(std::move(d));
      }
    }
    if (!c.model.Imports("torch_xla")) return;
    const std::vector<Node> step_loops = StepLoops(c.model);
    for (const Call& call : c.model.calls()) {
      if (call.name != "torch.utils.data.DataLoader" &&
          call.name != "torch.utils.data.dataloader.DataLoader") {
        continue;
      }
      // DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
      // pin_memory, drop_last, ...): only a training loader (it shuffles, itself or through its
      // sampler) is flagged, as dropping an evaluation loader's last batch would change the
      // metric.
      Node drop = Argument(call, 8, "drop_last");
      if (!Shuffles(c.model, call) || Argument(call, 4, "batch_sampler")) continue;
      if (drop ? BoolLiteral(drop) != false : call.splat) continue;
      const Node assignment = call.node.parent();
      if (assignment.is("assignment") && assignment.field("left").is("identifier") &&
          OnlyLookedAt(c.model, assignment, step_loops, 0)) {
        continue;
      }
      Diagnostic d =
          c.Finding(code(), Severity::kWarning, call.node,
                    "this training `DataLoader` (it shuffles) keeps the last, smaller batch "
                    "of each epoch: torch_xla compiles the step again for its shape");
      d.fix = Fix{"`DataLoader(..., drop_last=True)`",
                  FixApplicability::kSafe,
                  {MakeTrue(call, drop, "drop_last")}};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePipe004PartialBatch() { return std::make_unique<Pipe004>(); }

}  // namespace tpudoctor::script
