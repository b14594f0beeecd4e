#include "tpudoctor/knowledge/keras_layers.h"

#include <map>
#include <set>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

const std::map<std::string, KerasLayerInfo, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, KerasLayerInfo, std::less<>>();
    for (const auto& cols : EmbeddedTsvRows("data/keras/layers.tsv")) {
      if (cols.size() < 5) continue;
      KerasLayerInfo k;
      k.shape_rule = std::string(cols[1]);
      k.canonical = cols[2] == "-" ? "" : std::string(cols[2]);
      k.info.kind = ParseOpKind(cols[3]).value_or(OpKind::kUnknown);
      k.info.support = ParseOpSupport(cols[4]).value_or(OpSupport::kUnknownOp);
      if (cols.size() > 5) k.info.reason = std::string(cols[5]);
      k.builtin = true;
      t->emplace(std::string(cols[0]), std::move(k));
    }
    return t;
  }();
  return *table;
}

}  // namespace

const KerasLayerInfo& LookupKerasLayer(std::string_view class_name) {
  static const KerasLayerInfo* custom = [] {
    auto* c = new KerasLayerInfo();
    c->shape_rule = "unknown";
    c->info.kind = OpKind::kUnknown;
    c->info.support = OpSupport::kOpaque;
    c->info.reason =
        "a custom layer: its code is not in the model file, so tpu-doctor cannot check the ops it "
        "runs or its output shape";
    return c;
  }();
  auto it = Table().find(class_name);
  return it != Table().end() ? it->second : *custom;
}

namespace {

using ClassSet = std::set<std::string, std::less<>>;

const ClassSet* LoadClasses(std::string_view file) {
  auto* set = new ClassSet();
  for (const auto& cols : EmbeddedTsvRows(file)) {
    if (!cols.empty()) set->emplace(cols[0]);
  }
  return set;
}

// Function-local statics: initialized once, safely, even with several analyses in threads.
const ClassSet& Keras2Classes() {
  static const ClassSet* set = LoadClasses("data/keras/keras2_layers.txt");
  return *set;
}

const ClassSet& Keras3Classes() {
  static const ClassSet* set = LoadClasses("data/keras/keras3_layers.txt");
  return *set;
}

}  // namespace

bool KerasVersionDefines(std::string_view class_name, std::string_view keras_version) {
  if (!LookupKerasLayer(class_name).builtin) return false;
  if (keras_version.starts_with("2.")) return Keras2Classes().contains(class_name);
  if (keras_version.starts_with("3.")) return Keras3Classes().contains(class_name);
  return true;
}

}  // namespace tpudoctor
