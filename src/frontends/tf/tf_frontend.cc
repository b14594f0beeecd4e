#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <map>

#include "proto/tf/saved_model.pb.h"
#include "src/frontends/tf/tf_graph_builder.h"
#include "src/frontends/with_op_support.h"
#include "tpudoctor/frontend/keras.h"
#include "tpudoctor/frontend/tf.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

namespace tfp = tpudoctor::tf;
using tf_frontend::Signature;

// Protobuf's default recursion limit (100) bounds nesting; this keeps it explicit.
constexpr int kMaxProtoDepth = 100;

template <typename Message>
bool ParseBinary(const std::string& bytes, Message& m) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kMaxProtoDepth);
  return m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Text protos print no errors to stderr; the first one is kept.
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first.empty())
      first = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  std::string first;
};

bool HasNodes(const tfp::GraphDef& g) {
  for (const tfp::NodeDef& n : g.node()) {
    if (!n.op().empty()) return true;
  }
  return g.library().function_size() > 0;
}

bool LooksLikeText(const std::string& bytes) {
  const std::string_view head = std::string_view(bytes).substr(0, 4096);
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  for (const char* start : {"node", "library", "versions", "meta_graphs", "graph_def", "#"}) {
    if (head.substr(first).rfind(start, 0) == 0) return true;
  }
  return false;
}

std::string Extension(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  const std::size_t slash = name.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return name.substr(dot);
}

bool IsSavedModelName(const std::string& name) {
  return name.size() >= 14 && name.compare(name.size() - 14, 14, "saved_model.pb") == 0;
}

struct Program {
  tfp::GraphDef graph;
  Signature signature;
  std::string format;
  std::string producer;
  std::vector<std::string> notes;
};

// `__saved_model_init_op` and friends are not computations.
bool StartsWithInit(const std::string& key) { return key.rfind("__", 0) == 0; }

// Picks the `serve` meta graph and its serving signature.
void FromMetaGraph(tfp::MetaGraphDef& mg, Program& p) {
  p.graph = std::move(*mg.mutable_graph_def());
  if (!mg.meta_info_def().tensorflow_version().empty())
    p.producer = "tensorflow " + mg.meta_info_def().tensorflow_version();
  std::map<std::string, const tfp::SignatureDef*> sigs;
  for (const tfp::SignatureEntry& e : mg.signature_def()) {
    if (!StartsWithInit(e.key())) sigs[e.key()] = &e.value();
  }
  if (sigs.empty()) return;
  const std::string key = sigs.count("serving_default") ? "serving_default" : sigs.begin()->first;
  const tfp::SignatureDef& sig = *sigs.at(key);
  std::map<std::string, const tfp::TensorInfo*> ins, outs;
  for (const tfp::TensorInfoEntry& e : sig.inputs()) ins[e.key()] = &e.value();
  for (const tfp::TensorInfoEntry& e : sig.outputs()) outs[e.key()] = &e.value();
  for (const auto& [k, in] : ins) {
    const tfp::TensorInfo& info = *in;
    p.signature.inputs.push_back(info.name());
    if (info.has_tensor_shape() && !info.tensor_shape().unknown_rank()) {
      std::vector<std::int64_t> dims;
      for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size());
      p.signature.input_shapes[info.name()] = dims;
    }
  }
  for (const auto& [k, out] : outs) p.signature.outputs.push_back(out->name());
  p.notes.push_back("checked signature `" + key + "`" +
                    (sigs.size() > 1 ? " (of " + std::to_string(sigs.size()) + ")" : ""));
}

Result<Program> ReadProgram(const Source& source) {
  const std::string& bytes = source.bytes;
  const std::string& name = source.display_name;
  Program p;
  if (LooksLikeText(bytes)) {
    TextErrors errors;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    parser.SetRecursionLimit(kMaxProtoDepth);
    parser.AllowUnknownField(true);  // fields newer than our mirror of the protos
    tfp::GraphDef g;
    if (parser.ParseFromString(bytes, &g) && HasNodes(g)) {
      p.graph = std::move(g);
      p.format = "tf-graphdef";
      return p;
    }
    TextErrors meta_errors;
    parser.RecordErrorsTo(&meta_errors);
    tfp::SavedModel sm;
    if (parser.ParseFromString(bytes, &sm) && sm.meta_graphs_size() > 0) {
      FromMetaGraph(*sm.mutable_meta_graphs(0), p);
      p.format = "tf-savedmodel";
      return p;
    }
    return MakeError(name + ":" + (errors.first.empty() ? " not a text GraphDef" : errors.first));
  }
  // Binary: a SavedModel (saved_model.pb), a MetaGraphDef (.meta) or a GraphDef.
  tfp::SavedModel sm;
  if (ParseBinary(bytes, sm) && sm.meta_graphs_size() > 0 &&
      HasNodes(sm.meta_graphs(0).graph_def())) {
    int pick = 0;
    for (int i = 0; i < sm.meta_graphs_size(); ++i) {
      for (const std::string& tag : sm.meta_graphs(i).meta_info_def().tags()) {
        if (tag == "serve") pick = i;
      }
    }
    FromMetaGraph(*sm.mutable_meta_graphs(pick), p);
    p.format = "tf-savedmodel";
    return p;
  }
  // A `.meta` is tried as a MetaGraphDef first; anything else as a GraphDef first. Each parse at
  // most once.
  auto meta_graph = [&]() {
    tfp::MetaGraphDef mg;
    if (!ParseBinary(bytes, mg) || !HasNodes(mg.graph_def())) return false;
    FromMetaGraph(mg, p);
    p.format = "tf-metagraph";
    return true;
  };
  auto graph_def = [&]() {
    tfp::GraphDef g;
    if (!ParseBinary(bytes, g) || !HasNodes(g)) return false;
    p.graph = std::move(g);
    p.format = "tf-graphdef";
    return true;
  };
  const bool meta_first = Extension(name) == ".meta";
  if (meta_first ? meta_graph() || graph_def() : graph_def() || meta_graph()) return p;
  return MakeError(name +
                   ": not a valid TensorFlow SavedModel, MetaGraphDef or GraphDef protobuf "
                   "(truncated, nested too deeply, or another format)");
}

// By name and first byte only; see SniffTensorFlow.
int SniffBinary(const Source& source) {
  const std::string ext = Extension(source.display_name);
  if (IsSavedModelName(source.display_name) || !source.siblings.empty()) return 95;
  if (ext == ".meta") return 90;
  if (ext == ".pbtxt") return LooksLikeText(source.bytes) ? 90 : 0;
  if (ext == ".pb") return 40;
  // A SavedModel folder (read as its saved_model.pb) starts with its schema version (field 1,
  // varint), like an ONNX model.
  return ext.empty() && !source.bytes.empty() && source.bytes[0] == 0x08 ? 40 : 0;
}

// A Keras-built SavedModel records its model config in keras_metadata.pb.
std::string KerasVersion(const Source& source) {
  auto it = source.siblings.find("keras_metadata.pb");
  if (it == source.siblings.end()) return "";
  tfp::SavedMetadata meta;
  if (!ParseBinary(it->second, meta)) return "";
  for (const tfp::SavedObject& o : meta.nodes()) {
    if (o.node_path() != "root") continue;
    const std::size_t at = o.metadata().find("\"keras_version\": \"");
    if (at == std::string::npos) return "";
    const std::size_t end = o.metadata().find('"', at + 18);
    return end == std::string::npos ? "" : o.metadata().substr(at + 18, end - at - 18);
  }
  return "";
}

}  // namespace

int SniffTensorFlow(const Source& source) {
  if (LooksLikeText(source.bytes) && source.bytes.find("op:") != std::string::npos &&
      source.bytes.find("node") != std::string::npos) {
    return 80;
  }
  return SniffBinary(source);
}

namespace {

Result<LoadedModel> LoadTensorFlowUnannotated(const Source& source, const ShapeOptions& options) {
  auto program = ReadProgram(source);
  if (!program) return program.error();
  LoadedModel loaded{Graph("main"), program->format, program->producer, {}, program->notes};
  if (const std::string keras = KerasVersion(source); !keras.empty()) {
    loaded.producer += (loaded.producer.empty() ? "" : ", ") + std::string("keras ") + keras;
  }
  if (auto r = tf_frontend::BuildTfGraph(program->graph, program->signature, options, loaded); !r)
    return MakeError(source.display_name + ": " + r.error().message);
  return loaded;
}

}  // namespace

Result<LoadedModel> LoadTensorFlow(const Source& source, const ShapeOptions& options) {
  return WithOpSupport(LoadTensorFlowUnannotated(source, options));
}

}  // namespace tpudoctor
