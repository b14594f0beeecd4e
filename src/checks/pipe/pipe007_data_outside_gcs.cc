// PIPE007 data-outside-cloud-storage: a tf.data pipeline reads its files from another cloud, a web
// server or the local disk instead of Cloud Storage.
#include <set>

#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"
#include "tpudoctor/knowledge/storage.h"

namespace tpudoctor {
namespace {

// Ops whose string inputs are file names or patterns.
bool ReadsFiles(const Node& n) { return n.op == Op::kFileSource; }

class Pipe007DataOutsideGcs final : public Check {
 public:
  std::string_view code() const override { return "PIPE007"; }
  std::string_view name() const override { return "data-outside-cloud-storage"; }
  std::string_view summary() const override {
    return "a tf.data pipeline reads files from the local disk or another cloud instead of Cloud "
           "Storage";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    if (!pipe::IsPipelineGraph(ctx)) return;
    std::set<std::string> reported;
    ForEachNodeDeep(ctx.graph, [&](const Graph& g, const Node& n) {
      if (!ReadsFiles(n)) return;
      for (ValueId in : n.inputs) {
        if (in == kNoValue || !g.value(in).known_strings) continue;
        for (const std::string& path : *g.value(in).known_strings) {
          const std::string why = DataLocationProblem(path);
          if (why.empty() || !reported.insert(path).second) continue;
          Diagnostic d = NewFinding();
          d.severity = Severity::kWarning;
          d.message = pipe::Named(n) + " reads `" + path + "` from " + why;
          d.location = pipe::At(g, n);
          d.notes.push_back(
              "Cloud TPU reads training data from a Cloud Storage bucket in the TPU's region; "
              "tpu-doctor cannot tell a bucket's region from its name, so gs:// paths are not "
              "judged");
          d.fix =
              Fix{"copy the data to a gs:// bucket in the TPU's region (`gcloud storage cp`) "
                  "and read it from there",
                  FixApplicability::kDisplayOnly};
          sink.Add(std::move(d));
        }
      }
    });
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe007DataOutsideGcs() {
  return std::make_unique<Pipe007DataOutsideGcs>();
}

}  // namespace tpudoctor
