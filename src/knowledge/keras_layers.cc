#include "tpudoctor/knowledge/keras_layers.h"

#include <map>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

std::optional<OpSupport> ParseSupport(std::string_view s) {
  if (s == "ok") return OpSupport::kOk;
  if (s == "unsupported") return OpSupport::kUnsupported;
  if (s == "opaque") return OpSupport::kOpaque;
  return std::nullopt;
}

const std::map<std::string, KerasLayerInfo, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, KerasLayerInfo, std::less<>>();
    for (std::string_view line : SplitLines(FindEmbedded("data/keras/layers.tsv").value_or(""))) {
      if (line.empty() || line.front() == '#') continue;
      auto cols = Split(line, '\t');
      if (cols.size() < 5) continue;
      KerasLayerInfo k;
      k.shape_rule = std::string(cols[1]);
      k.canonical = cols[2] == "-" ? "" : std::string(cols[2]);
      k.info.kind = ParseOpKind(cols[3]).value_or(OpKind::kUnknown);
      k.info.support = ParseSupport(cols[4]).value_or(OpSupport::kUnknownOp);
      if (cols.size() > 5) k.info.reason = std::string(cols[5]);
      k.builtin = true;
      t->emplace(std::string(cols[0]), std::move(k));
    }
    return t;
  }();
  return *table;
}

}  // namespace

KerasLayerInfo LookupKerasLayer(std::string_view class_name) {
  auto it = Table().find(class_name);
  if (it != Table().end()) return it->second;
  KerasLayerInfo custom;
  custom.shape_rule = "unknown";
  custom.info.kind = OpKind::kUnknown;
  custom.info.support = OpSupport::kOpaque;
  custom.info.reason =
      "a custom layer: its code is not in the model file, so tpu-doctor cannot check the ops it "
      "runs or its output shape";
  return custom;
}

}  // namespace tpudoctor
