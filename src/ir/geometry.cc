#include "tpudoctor/ir/geometry.h"

#include <algorithm>
#include <unordered_set>

#include "tpudoctor/ir/graph.h"
#include "tpudoctor/support/strings.h"

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

// The dimension numbers of an ONNX-shaped matrix product, when its operands' ranks and dims allow
// them: Gemm on matrices (transA/transB pick the contracting dims); MatMul whose right operand is
// a vector or a matrix shared across the left's batch dims (they become rows of M, one big
// matmul), or whose operands have the same rank and the same static batch dims. A MatMul that
// broadcasts batch dims has none: the cost model reads its numpy-style shapes.
std::optional<DotDims> OnnxDotDims(const Graph& graph, const Node& n) {
  if (n.inputs.size() < 2 || n.input(0) == kNoValue || n.input(1) == kNoValue) return std::nullopt;
  const Shape& a = graph.value(n.input(0)).type.shape;
  const Shape& b = graph.value(n.input(1)).type.shape;
  if (!a.rank_known() || !b.rank_known() || a.rank() == 0 || b.rank() == 0) return std::nullopt;
  const auto ra = static_cast<std::int64_t>(a.rank());
  const auto rb = static_cast<std::int64_t>(b.rank());
  DotDims d;
  if (n.op == Op::kGemm) {
    if (ra != 2 || rb != 2) return std::nullopt;
    d.lhs_contracting = {n.IntAttr("transA").value_or(0) != 0 ? 0 : 1};
    d.rhs_contracting = {n.IntAttr("transB").value_or(0) != 0 ? 1 : 0};
    return d;
  }
  d.lhs_contracting = {ra - 1};
  if (rb <= 2) {
    d.rhs_contracting = {0};
    return d;
  }
  if (ra != rb) return std::nullopt;
  for (std::int64_t i = 0; i + 2 < ra; ++i) {
    const Dim& x = a.dim(static_cast<std::size_t>(i));
    if (!x.is_static() || !(x == b.dim(static_cast<std::size_t>(i)))) return std::nullopt;
    d.lhs_batch.push_back(i);
    d.rhs_batch.push_back(i);
  }
  d.rhs_contracting = {rb - 2};
  return d;
}

// `1x3x3x1` of an XLA window's `size=1x3x3x1 stride=...`; nullopt when it has no size.
std::optional<std::vector<std::int64_t>> XlaWindowSize(std::string_view window) {
  const std::size_t at = window.find("size=");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view field = window.substr(at + 5, window.find_first_of(" }", at) - at - 5);
  std::vector<std::int64_t> size;
  for (std::string_view dim : Split(field, 'x')) {
    const auto v = ParseInt64(dim);
    if (!v || *v < 1) return std::nullopt;
    size.push_back(*v);
  }
  return size;
}

std::optional<std::vector<std::int64_t>> PoolWindow(const Node& n) {
  if (auto kernel = n.IntsAttr("kernel_shape")) return kernel;
  if (n.op != Op::kReduceWindow) return std::nullopt;
  if (auto window = n.StringAttr("window")) return XlaWindowSize(*window);
  return std::nullopt;
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
    } else if (n.op == Op::kMatMul || n.op == Op::kGemm || n.op == Op::kMatMulInteger) {
      n.dot = OnnxDotDims(graph, n);
    }
    if (n.kind == OpKind::kPool) n.window = PoolWindow(n);
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
