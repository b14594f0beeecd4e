#include "tpudoctor/knowledge/tf_ops.h"

#include <map>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

const std::map<std::string, TfOpInfo, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, TfOpInfo, std::less<>>();
    for (const auto& cols : EmbeddedTsvRows("data/tf/ops.tsv")) {
      if (cols.size() < 4) continue;
      TfOpInfo op;
      op.known = true;
      op.canonical = cols[1] == "-" ? "" : std::string(cols[1]);
      op.info.kind = ParseOpKind(cols[2]).value_or(OpKind::kOther);
      const std::string_view s = cols[3];
      op.pipeline = s == "pipeline";
      op.python = s == "python";
      // A tf.data op is fine where it runs (the host); the PIPE rules judge it.
      op.info.support =
          op.pipeline ? OpSupport::kOk : ParseOpSupport(s).value_or(OpSupport::kHostFallback);
      if (cols.size() > 4) op.info.reason = std::string(cols[4]);
      t->emplace(std::string(cols[0]), std::move(op));
    }
    return t;
  }();
  return *table;
}

}  // namespace

const TfOpInfo& LookupTfOp(std::string_view op) {
  static const TfOpInfo* custom = [] {
    auto* c = new TfOpInfo();
    c->info.kind = OpKind::kUnknown;
    c->info.support = OpSupport::kUnsupported;
    c->info.reason =
        "not an op TensorFlow defines: a custom op from a library loaded at run time, with no "
        "XLA kernel";
    return c;
  }();
  auto it = Table().find(op);
  return it != Table().end() ? it->second : *custom;
}

}  // namespace tpudoctor
