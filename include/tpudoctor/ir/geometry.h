// The geometry of matrix ops in XLA's terms, as typed node fields: which operand dims of a dot are
// batch and contracting dims, and where batch, feature and spatial dims sit in a convolution's
// input, kernel and output. Frontends whose ops are not ONNX-shaped (XLA programs, torch.export,
// Keras, TensorFlow) describe them this way; FillGeometry reads them once from the node's
// attributes (`lhs_contracting_dims`, `dim_labels=b01f_01io->b01f`, `feature_group_count`) when a
// model is loaded, so the cost model and the rules never parse label strings. ONNX Gemm and MatMul
// get dimension numbers from their operands' shapes too, except a MatMul that broadcasts batch
// dims (numpy-style), which no dot expresses.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tpudoctor {

class Graph;

struct DotDims {
  std::vector<std::int64_t> lhs_batch, rhs_batch;
  std::vector<std::int64_t> lhs_contracting, rhs_contracting;
};

struct ConvDims {
  std::int64_t input_batch = 0, input_feature = 1;
  std::vector<std::int64_t> input_spatial;
  std::int64_t kernel_input_feature = 1, kernel_output_feature = 0;
  std::vector<std::int64_t> kernel_spatial;
  std::int64_t output_batch = 0, output_feature = 1;
  std::vector<std::int64_t> output_spatial;
  std::int64_t feature_groups = 1;  // depthwise: groups = input features

  std::size_t input_rank() const { return input_spatial.size() + 2; }
  std::size_t kernel_rank() const { return kernel_spatial.size() + 2; }
  std::size_t output_rank() const { return output_spatial.size() + 2; }
  // The output keeps its features second (NCHW-like, `bf01`), not minor (`b01f`).
  bool channels_second() const { return output_feature == 1; }
};

// `b01f_01io->b01f` (XLA's dim_labels): nullopt unless each part names its batch/feature (or
// input/output feature) dim once and the same spatial dims 0..n-1.
std::optional<ConvDims> ParseConvLabels(std::string_view labels, std::int64_t feature_groups = 1);

// Sets Node::dot and Node::conv of every node of `graph` and its subgraphs that carries XLA
// dimension numbers or dim_labels. Frontends call it once, as their last step.
void FillGeometry(Graph& graph);

}  // namespace tpudoctor
