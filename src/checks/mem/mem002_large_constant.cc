// MEM002 large-constant: a tensor compiled into the program as a constant (an array a jitted
// function closed over, an ONNX Constant, an HLO literal) large enough to take a real share of the
// device's HBM. Reported once, at the largest, with the others counted.
#include <algorithm>

#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMinBytes = kGiB;                        // always worth saying from this size
constexpr double kMinShareOfHbm = 0.10;                   // or from this share of one device's HBM
constexpr double kSmallestReported = 64.0 * 1024 * 1024;  // never below this

// A literal stored in the program: HLO `constant`, ONNX `Constant`, TensorFlow `Const`. Other
// constant-kind ops (`iota`, `ConstantOfShape`, `Range`) are computed on the device, not stored.

struct Hit {
  std::string path;
  const Node* node;
  const Value* value;
  double bytes;
};

class Mem002LargeConstant final : public Check {
 public:
  std::string_view code() const override { return "MEM002"; }
  std::string_view name() const override { return "large-constant"; }
  std::string_view summary() const override {
    return "a large tensor is compiled into the program as a constant instead of passed in";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    const double hbm =
        ctx.target.hbm_gib.value_or(0) * kGiB / std::max(1, ctx.target.devices_per_chip);
    const double threshold = std::max(
        kSmallestReported, hbm > 0 ? std::min(kMinBytes, kMinShareOfHbm * hbm) : kMinBytes);
    std::vector<Hit> hits;
    ForEachNodeWithPath(ctx.graph, ctx.graph.name(),
                        [&](const Graph& g, const std::string& path, const Node& n) {
                          if (!n.IsStoredConstant()) return;
                          for (ValueId out : n.outputs) {
                            const Value& v = g.value(out);
                            const auto bytes = v.type.SizeInBytes();
                            if (bytes && static_cast<double>(*bytes) >= threshold)
                              hits.push_back({path, &n, &v, static_cast<double>(*bytes)});
                          }
                        });
    if (hits.empty()) return;
    std::stable_sort(hits.begin(), hits.end(),
                     [](const Hit& a, const Hit& b) { return a.bytes > b.bytes; });
    const Hit& top = hits.front();
    double total = 0;
    for (const Hit& h : hits) total += h.bytes;
    Diagnostic d = NewFinding();
    // A constant that cannot fit in the device's memory on its own cannot run at all.
    d.severity = hbm > 0 && top.bytes > hbm ? Severity::kError : Severity::kWarning;
    d.message = "`" + top.value->name + "` " + top.value->type.ToString() + " is a " +
                FormatGiB(top.bytes) + " constant compiled into the program" +
                (hbm > 0 ? ", " + FormatFixed(100 * top.bytes / hbm, 0) + "% of " +
                               ctx.target.name + "'s " + FormatGiB(hbm) + " of HBM per device"
                         : "");
    d.location = LocationOf(top.path, *top.node);
    d.location.value = top.value->name;
    if (hits.size() > 1) {
      d.notes.push_back(
          Plural(static_cast<std::int64_t>(hits.size()), "large constant", "large constants") +
          " in all, " + FormatGiB(total));
    }
    d.notes.push_back(
        "XLA compiles constants into the program: each stays in HBM for the program's lifetime, "
        "on every replica, and is part of every compilation; a TensorFlow graph cannot carry "
        "more than 2 GiB of them (protobuf's limit)");
    d.fix =
        Fix{"pass it in instead of baking it in: as an argument of the jitted function (JAX: "
            "do not close over the array), a variable or weight (TensorFlow, Keras, PyTorch "
            "buffers), or, if it is data, stream it through the input pipeline",
            FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<Check> MakeMem002LargeConstant() { return std::make_unique<Mem002LargeConstant>(); }

}  // namespace tpudoctor
