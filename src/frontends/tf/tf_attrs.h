// Reading a TensorFlow NodeDef's attributes (repeated key/value entries in our proto mirror),
// shared by the graph builder and the shape rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/tf/graph.pb.h"

namespace tpudoctor::tf_frontend {

inline const tpudoctor::tf::AttrValue* Attr(const tpudoctor::tf::NodeDef& n, std::string_view key) {
  for (const tpudoctor::tf::AttrEntry& e : n.attr()) {
    if (e.key() == key) return &e.value();
  }
  return nullptr;
}

inline std::vector<std::int64_t> IntsAttr(const tpudoctor::tf::NodeDef& n, std::string_view key) {
  const tpudoctor::tf::AttrValue* a = Attr(n, key);
  if (a == nullptr || !a->has_list()) return {};
  return {a->list().i().begin(), a->list().i().end()};
}

inline std::string StringAttr(const tpudoctor::tf::NodeDef& n, std::string_view key,
                              const std::string& def) {
  const tpudoctor::tf::AttrValue* a = Attr(n, key);
  return a != nullptr && a->value_case() == tpudoctor::tf::AttrValue::kS ? a->s() : def;
}

inline bool BoolAttr(const tpudoctor::tf::NodeDef& n, std::string_view key) {
  const tpudoctor::tf::AttrValue* a = Attr(n, key);
  return a != nullptr && a->b();
}

// `data_format` NCHW / NCDHW (NHWC is TensorFlow's default).
inline bool ChannelsFirst(const tpudoctor::tf::NodeDef& n) {
  return StringAttr(n, "data_format", "NHWC").starts_with("NC");
}

}  // namespace tpudoctor::tf_frontend
