#include "tpudoctor/ir/geometry.h"

#include <algorithm>
#include <unordered_set>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor {
namespace {

// One part of the labels: the positions of two letter dims and of the spatial digits 0..n-1.
struct Part {
  std::int64_t first = -1, second = -1;
  std::vector<std::int64_t> spatial;
};

std::optional<Part> ParsePart(std::string_view text, char first, char second) {
  Part p;
  std::vector<std::int64_t> by_digit(text.size(), -1);
  std::size_t digits = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto at = static_cast<std::int64_t>(i);
    if (c == first && p.first < 0) {
      p.first = at;
    } else if (c == second && p.second < 0) {
      p.second = at;
    } else if (c >= '0' && c <= '9' && static_cast<std::size_t>(c - '0') < text.size() &&
               by_digit[static_cast<std::size_t>(c - '0')] < 0) {
      by_digit[static_cast<std::size_t>(c - '0')] = at;
      ++digits;
    } else {
      return std::nullopt;
    }
  }
  if (p.first < 0 || p.second < 0) return std::nullopt;
  for (std::size_t d = 0; d < digits; ++d) {
    if (by_digit[d] < 0) return std::nullopt;  // digits must be 0..n-1
    p.spatial.push_back(by_digit[d]);
  }
  return p;
}

void Fill(Graph& graph, std::unordered_set<const Graph*>& done) {
  if (!done.insert(&graph).second) return;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    Node& n = graph.mutable_node(static_cast<NodeId>(i));
    if (auto labels = n.StringAttr("dim_labels")) {
      n.conv = ParseConvLabels(*labels, n.IntAttr("feature_group_count").value_or(1));
    }
    if (n.FindAttr("lhs_contracting_dims") || n.FindAttr("rhs_contracting_dims") ||
        n.FindAttr("lhs_batch_dims") || n.FindAttr("rhs_batch_dims")) {
      auto ints = [&](const char* key) {
        return n.IntsAttr(key).value_or(std::vector<std::int64_t>{});
      };
      n.dot = DotDims{ints("lhs_batch_dims"), ints("rhs_batch_dims"), ints("lhs_contracting_dims"),
                      ints("rhs_contracting_dims")};
    }
    for (Subgraph& sub : n.subgraphs) {
      if (sub.graph) Fill(*sub.graph, done);
    }
  }
}

}  // namespace

std::optional<ConvDims> ParseConvLabels(std::string_view labels, std::int64_t feature_groups) {
  const std::size_t under = labels.find('_');
  const std::size_t arrow = labels.find("->");
  if (under == std::string_view::npos || arrow == std::string_view::npos || arrow < under)
    return std::nullopt;
  auto in = ParsePart(labels.substr(0, under), 'b', 'f');
  auto kernel = ParsePart(labels.substr(under + 1, arrow - under - 1), 'i', 'o');
  auto out = ParsePart(labels.substr(arrow + 2), 'b', 'f');
  if (!in || !kernel || !out) return std::nullopt;
  if (in->spatial.size() != kernel->spatial.size() || in->spatial.size() != out->spatial.size())
    return std::nullopt;
  ConvDims c;
  c.input_batch = in->first;
  c.input_feature = in->second;
  c.input_spatial = in->spatial;
  c.kernel_input_feature = kernel->first;
  c.kernel_output_feature = kernel->second;
  c.kernel_spatial = kernel->spatial;
  c.output_batch = out->first;
  c.output_feature = out->second;
  c.output_spatial = out->spatial;
  c.feature_groups = std::max<std::int64_t>(1, feature_groups);
  return c;
}

void FillGeometry(Graph& graph) {
  std::unordered_set<const Graph*> done;
  Fill(graph, done);
}

}  // namespace tpudoctor
