#include "src/frontends/onnx/onnx_file.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

namespace tpudoctor::onnx_frontend {
namespace {

using google::protobuf::io::CodedInputStream;
using WireFormat = google::protobuf::internal::WireFormatLite;

// Protobuf's default recursion limit: a message nested d deep in the file may nest 100 - d more.
constexpr int kRecursionLimit = 100;
constexpr int kGraphDepth = 1;     // ModelProto.graph
constexpr int kTopLevelDepth = 2;  // ModelProto.graph.node / .initializer

CodedInputStream StreamOver(std::string_view bytes) {
  return CodedInputStream(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                          static_cast<int>(bytes.size()));
}

bool ParseAtDepth(std::string_view bytes, int depth, google::protobuf::MessageLite& into) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return false;
  CodedInputStream in = StreamOver(bytes);
  in.SetRecursionLimit(kRecursionLimit - depth);
  return into.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Reads one field's tag, or returns 0 where no valid field starts (end of input included).
std::uint32_t ReadFieldTag(CodedInputStream& in) {
  const std::uint32_t tag = in.ReadTag();
  return WireFormat::GetTagFieldNumber(tag) == 0 ? 0 : tag;
}

bool IsMessageField(std::uint32_t tag, int field) {
  return WireFormat::GetTagFieldNumber(tag) == field &&
         WireFormat::GetTagWireType(tag) == WireFormat::WIRETYPE_LENGTH_DELIMITED;
}

// The bytes of a length-delimited field whose tag was just read; false past the input's end.
bool ReadDelimited(CodedInputStream& in, std::string_view all, std::string_view& out) {
  std::uint32_t length = 0;
  if (!in.ReadVarint32(&length)) return false;
  const int start = in.CurrentPosition();
  if (!in.Skip(static_cast<int>(std::min<std::uint32_t>(length, INT_MAX)))) return false;
  out = all.substr(static_cast<std::size_t>(start), length);
  return true;
}

// Skips the field whose tag was just read (at `start`) and appends its encoding to `rest`.
bool KeepField(CodedInputStream& in, std::uint32_t tag, std::string_view all, int start,
               std::string& rest) {
  if (!WireFormat::SkipField(&in, tag)) return false;
  rest.append(all.substr(static_cast<std::size_t>(start),
                         static_cast<std::size_t>(in.CurrentPosition() - start)));
  return true;
}

// Whether an encoded AttributeProto has a `t`, `g` or `graphs` field; nullopt where it is not a
// protobuf message.
std::optional<bool> HasTensorOrGraph(std::string_view attribute) {
  CodedInputStream in = StreamOver(attribute);
  bool found = false;
  while (in.CurrentPosition() < static_cast<int>(attribute.size())) {
    const std::uint32_t tag = ReadFieldTag(in);
    if (tag == 0) return std::nullopt;
    found = found || IsMessageField(tag, onnx::AttributeProto::kTFieldNumber) ||
            IsMessageField(tag, onnx::AttributeProto::kGFieldNumber) ||
            IsMessageField(tag, onnx::AttributeProto::kGraphsFieldNumber);
    if (!WireFormat::SkipField(&in, tag)) return std::nullopt;
  }
  return found;
}

// Reads a node's outputs and whether an attribute holds a tensor or a subgraph.
bool OutlineNode(EncodedNode& node, std::vector<std::string_view>& outputs) {
  CodedInputStream in = StreamOver(node.bytes);
  node.first_output = static_cast<std::uint32_t>(outputs.size());
  while (in.CurrentPosition() < static_cast<int>(node.bytes.size())) {
    const std::uint32_t tag = ReadFieldTag(in);
    if (tag == 0) return false;
    std::string_view bytes;
    if (IsMessageField(tag, onnx::NodeProto::kOutputFieldNumber) ||
        IsMessageField(tag, onnx::NodeProto::kAttributeFieldNumber)) {
      if (!ReadDelimited(in, node.bytes, bytes)) return false;
    } else if (!WireFormat::SkipField(&in, tag)) {
      return false;
    }
    if (IsMessageField(tag, onnx::NodeProto::kOutputFieldNumber)) {
      outputs.push_back(bytes);
    } else if (IsMessageField(tag, onnx::NodeProto::kAttributeFieldNumber)) {
      const std::optional<bool> carries = HasTensorOrGraph(bytes);
      if (!carries) return false;
      node.has_tensor_or_graph = node.has_tensor_or_graph || *carries;
    }
  }
  node.outputs = static_cast<std::uint32_t>(outputs.size()) - node.first_output;
  return true;
}

// One `graph` field's contents (the stream limited to them): nodes and initializers to `file`,
// every other field to `rest`.
bool SplitGraph(CodedInputStream& in, std::string_view all, OnnxFile& file, std::string& rest) {
  while (in.BytesUntilLimit() > 0) {
    const int start = in.CurrentPosition();
    const std::uint32_t tag = ReadFieldTag(in);
    if (tag == 0) return false;
    std::string_view bytes;
    if (IsMessageField(tag, onnx::GraphProto::kNodeFieldNumber)) {
      if (!ReadDelimited(in, all, bytes)) return false;
      EncodedNode& node = file.nodes.emplace_back();
      node.bytes = bytes;
      if (!OutlineNode(node, file.outputs)) return false;
    } else if (IsMessageField(tag, onnx::GraphProto::kInitializerFieldNumber)) {
      if (!ReadDelimited(in, all, bytes)) return false;
      file.initializers.push_back(bytes);
    } else if (!KeepField(in, tag, all, start, rest)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<OnnxFile> SplitOnnxFile(std::string_view bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return MakeError("");
  OnnxFile file;
  std::string model_rest;
  std::string graph_rest;
  CodedInputStream in = StreamOver(bytes);
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    const int start = in.CurrentPosition();
    const std::uint32_t tag = ReadFieldTag(in);
    if (tag == 0) return MakeError("");
    if (IsMessageField(tag, onnx::ModelProto::kGraphFieldNumber)) {
      std::uint32_t length = 0;
      if (!in.ReadVarint32(&length) ||
          length > bytes.size() - static_cast<std::size_t>(in.CurrentPosition()))
        return MakeError("");
      const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
      if (!SplitGraph(in, bytes, file, graph_rest)) return MakeError("");
      in.PopLimit(limit);
      file.has_graph = true;
    } else if (!KeepField(in, tag, bytes, start, model_rest)) {
      return MakeError("");
    }
  }
  if (!ParseAtDepth(model_rest, 0, file.model)) return MakeError("");
  if (file.has_graph && !ParseAtDepth(graph_rest, kGraphDepth, *file.model.mutable_graph()))
    return MakeError("");
  return file;
}

bool ParseTopLevel(std::string_view bytes, google::protobuf::MessageLite& into) {
  return ParseAtDepth(bytes, kTopLevelDepth, into);
}

}  // namespace tpudoctor::onnx_frontend
