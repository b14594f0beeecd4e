// PERF001 tile-padding: on TPU, tensors are stored in (8,128) tiles; a small minor dim (3, 10, 64)
// is padded up to 128, so the tensor takes several times its size in HBM and bandwidth.
#include <algorithm>
#include <set>

#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

constexpr double kMinInflation = 2.0;       // padded / unpadded size worth a warning
constexpr double kMinWasteBytes = 1 << 20;  // and at least 1 MiB of padding
constexpr double kBlowUp = 8.0;             // one tensor this inflated is always worth it

std::string Mib(double b) { return FormatFixed(b / (1024.0 * 1024), 1) + " MiB"; }

// The image batch fed to a convolutional network and the pointwise ops on it before the first
// convolution (rescaling, normalizing, casting): rank 4 with 4 or fewer channels (RGB, RGBA, grey)
// in the last dim (NHWC) or the second (NCHW). XLA:TPU chooses the on-device layout of an entry
// parameter for the program that reads it and fuses the pointwise ops into the convolution's
// input, which reads the image once: its (8,128) padding as written is not what the device
// stores, nor a cost worth a finding.
std::set<ValueId> ImageValues(const Graph& g) {
  std::set<ValueId> images;
  if (std::ranges::none_of(g.nodes(), [](const Node& n) { return n.kind == OpKind::kConv; }))
    return images;
  auto image_shaped = [&](const Value& v) {
    const Shape& s = v.type.shape;
    auto small = [&](std::size_t c) { return s.dim(c).is_static() && s.dim(c).value() <= 4; };
    return s.rank_known() && s.rank() == 4 && (small(1) || small(3));
  };
  std::vector<ValueId> frontier;
  for (ValueId in : g.inputs()) {
    if (image_shaped(g.value(in))) frontier.push_back(in);
  }
  while (!frontier.empty()) {
    const ValueId v = frontier.back();
    frontier.pop_back();
    if (!images.insert(v).second) continue;
    for (NodeId user : g.value(v).users) {
      const Node& n = g.node(user);
      if (n.kind != OpKind::kElementwise && n.kind != OpKind::kCast) continue;
      for (ValueId out : n.outputs) {
        if (image_shaped(g.value(out))) frontier.push_back(out);
      }
    }
  }
  return images;
}

// A reshape or transpose whose every use is a matmul, through other views, index selections and
// pointwise ops (`q, k, v = qkv[0], qkv[1], qkv[2]`; `q * scale`): XLA folds it into the dot's
// operand dims and layout, or fuses it into the dot's operand, instead of writing it out as
// shaped (attention's head split).
bool FoldedIntoMatmul(const Graph& g, const Value& v, int depth = 0, bool inner = false) {
  if (v.producer == kNoNode || v.users.empty() || depth > 4) return false;
  const OpKind made_by = g.node(v.producer).kind;
  if (made_by != OpKind::kLayout &&
      !(inner && (made_by == OpKind::kGather || made_by == OpKind::kElementwise)))
    return false;
  return std::ranges::all_of(v.users, [&](NodeId user) {
    const Node& n = g.node(user);
    if (n.kind == OpKind::kMatMul) return true;
    return (n.kind == OpKind::kLayout || n.kind == OpKind::kGather ||
            n.kind == OpKind::kElementwise) &&
           !n.outputs.empty() && FoldedIntoMatmul(g, g.value(n.outputs[0]), depth + 1, true);
  });
}

// What a user can do, by what the padded tensor is.
// The performance guide's other padding-free layout: a per-core batch in 128s with features in
// 8s lets XLA put the batch in the lanes of a convolution activation. Judgement: the memory model
// keeps such activations channels-minor (its padding is an upper bound there), but the rule does
// not warn about padding the user has already removed the way the guide says.
bool BatchInLanes(const Value& v, std::int64_t batch) {
  const Shape& s = v.type.shape;
  return batch > 0 && batch % 128 == 0 && s.rank_known() && s.rank() == 4 && s.dim(1).is_static() &&
         s.dim(1).value() % 8 == 0;
}

std::string FixFor(const Value& v, bool channels_minor, std::int64_t batch) {
  // A convolution activation laid out channels-minor: its channel count is the network's (64),
  // not something to change; the guide's other padding-free layout wants the batch in 128s.
  const Shape& s = v.type.shape;
  if (channels_minor && s.rank() == 4 && s.dim(1).is_static() && s.dim(1).value() % 8 == 0) {
    return "the channel count (" + std::to_string(s.dim(1).value()) +
           ") is the minor dim and the network's own; the Cloud TPU performance guide's other "
           "padding-free layout needs a per-core batch that is a multiple of 128" +
           (batch > 0 ? " (here " + std::to_string(batch) + ")" : std::string()) +
           ", if memory allows (`tpu-doctor estimate` names the largest batch that fits)";
  }
  return "make the minor (last) dim a multiple of 128 or move a large dim into the minor position "
         "(e.g. points x features as [batch, features, points], or pad features to 128); fold "
         "small dims together with reshapes";
}

class Perf001TilePadding final : public Check {
 public:
  std::string_view code() const override { return "PERF001"; }
  std::string_view name() const override { return "tile-padding"; }
  std::string_view summary() const override {
    return "a tensor's minor dims are padded to the TPU's (8,128) tiles, inflating it several "
           "times";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    if (!ctx.target.tiling || ctx.estimate == nullptr) return;
    const ChannelsMinorValues channels_minor(ctx.graph);
    const std::set<ValueId> images = ImageValues(ctx.graph);
    const int eb = ctx.options.precision == Precision::kFp32 ? 4 : 2;
    struct Hit {
      const Value* value;
      double natural, padded;
    };
    std::vector<Hit> hits;
    double total_waste = 0;
    for (const Value& v : ctx.graph.values()) {
      // Float activations: masks and indices are small, and PRED's 4-byte storage is not padding.
      if (v.origin == ValueOrigin::kInitializer || v.type.kind != ValueKind::kTensor ||
          TraitsOf(v.type.dtype).cls != DTypeClass::kFloat || images.contains(v.id) ||
          FoldedIntoMatmul(ctx.graph, v)) {
        continue;
      }
      if (channels_minor(v) && BatchInLanes(v, ctx.batch)) continue;
      auto natural = TensorBytes(v.type, eb);
      auto padded = LayoutBytes(v.type, ctx.target, eb, channels_minor(v));
      if (!natural || !padded || *natural <= 0) continue;
      const double waste = *padded - *natural;
      if (*padded / *natural < kMinInflation || waste < kMinWasteBytes) continue;
      hits.push_back({&v, *natural, *padded});
      total_waste += waste;
    }
    // Where it matters: the padding is a sizeable part of the model's activation memory.
    constexpr double kMinShareOfActivations = 0.25;
    double activations = 0;
    for (const Value& v : ctx.graph.values()) {
      if (v.origin == ValueOrigin::kInitializer || v.type.kind != ValueKind::kTensor) continue;
      activations += LayoutBytes(v.type, ctx.target, eb, channels_minor(v)).value_or(0);
    }
    // ... or one tensor blows up: a minor dim of 16 or less padded to 128 (8x or more).
    const bool blow_up = std::any_of(hits.begin(), hits.end(),
                                     [](const auto& h) { return h.padded >= kBlowUp * h.natural; });
    if (hits.empty() || (!blow_up && total_waste < kMinShareOfActivations * activations)) return;
    std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
      return a.padded - a.natural > b.padded - b.natural;
    });
    const Hit& worst = hits.front();
    Diagnostic d = NewFinding();
    d.severity = Severity::kWarning;
    d.message = "`" + worst.value->name + "` " + worst.value->type.ToString() + " takes " +
                Mib(worst.padded) + " in " + ctx.target.name + "'s tiled layout instead of " +
                Mib(worst.natural) + " (" + FormatFixed(worst.padded / worst.natural, 1) +
                "x): its minor dims are padded to (8,128) tiles";
    d.location.graph = ctx.graph.name();
    d.location.value = worst.value->name;
    if (worst.value->producer != kNoNode) {
      const Node& p = ctx.graph.node(worst.value->producer);
      d.location.node = p.name;
      d.location.op = p.QualifiedOp();
      d.location.scope = p.loc.scope;
    }
    d.notes.push_back(Plural(static_cast<std::int64_t>(hits.size()), "tensor is", "tensors are") +
                      " inflated 2x or more, " + Mib(total_waste) +
                      " of padding in all at this batch");
    std::vector<std::string> more;
    for (std::size_t i = 1; i < hits.size() && i < 4; ++i) {
      more.push_back("`" + hits[i].value->name + "` " + hits[i].value->type.ToString());
    }
    if (!more.empty()) d.notes.push_back("next: " + Join(more, ", "));
    d.notes.push_back(
        "XLA stores arrays in (8,128) tiles of their two minor dims (openxla/xla "
        "docs/tiled_layout.md); "
        "the profiler's memory viewer shows the actual layout");
    d.fix = Fix{FixFor(*worst.value, channels_minor(*worst.value), ctx.batch),
                FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<Check> MakePerf001TilePadding() { return std::make_unique<Perf001TilePadding>(); }

}  // namespace tpudoctor
