// Graph: the framework-neutral program every frontend produces and every check reads.
//
// A Graph owns its Values (SSA edges) and Nodes in stable vectors addressed by ValueId/NodeId.
// A Value has one producer (a node, or none for graph inputs, initializers and captured
// outer-scope values) and any number of users. A Node keeps the op's original domain and name for
// messages plus a canonical OpKind, Op and traits for analyses; control-flow nodes own their
// subgraphs, whose values may capture values of the enclosing graphs by name
// (ValueOrigin::kCaptured).
//
// Build a graph with AddValue/AddNode, then call Finalize(): it links users, computes a
// topological order and rejects cycles. After that the graph is read-only to checks.
// Start with `Graph::topo_order()` to walk it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tpudoctor/ir/geometry.h"
#include "tpudoctor/ir/model_facts.h"
#include "tpudoctor/ir/op.h"
#include "tpudoctor/ir/op_kind.h"
#include "tpudoctor/ir/shape.h"
#include "tpudoctor/support/boxed.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

using ValueId = std::int32_t;
using NodeId = std::int32_t;
inline constexpr ValueId kNoValue = -1;
inline constexpr NodeId kNoNode = -1;

// Where a node came from, as precisely as the format says: a line/column for text formats, a
// framework layer path or Python stack frame where the exporter recorded one.
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
  std::string scope;  // framework layer path, e.g. "/backbone/layer1/0/conv1"

  bool empty() const { return file.empty() && line == 0 && scope.empty(); }
};

enum class ValueOrigin : std::uint8_t { kNodeOutput, kGraphInput, kInitializer, kCaptured };

struct Value {
  ValueId id = kNoValue;
  std::string name;
  TensorType type;
  ValueOrigin origin = ValueOrigin::kNodeOutput;
  NodeId producer = kNoNode;
  std::vector<NodeId> users;
  // The elements of a small integer tensor whose contents are known before running the model
  // (an initializer, a Constant, or a shape computation folded by the frontend). Elements may be
  // symbolic (`batch`). Absent when the contents are unknown or too large to keep.
  Boxed<std::vector<Dim>> known_ints;
  // known_ints as numbers, when every element is static; nullopt otherwise.
  std::optional<std::vector<std::int64_t>> StaticInts() const;
  // The elements of a small string constant (the file names a tf.data pipeline reads).
  Boxed<std::vector<std::string>> known_strings;
};

using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                               std::vector<double>, std::vector<std::string>>;

struct Attribute {
  std::string name;
  AttrValue value;
};

class Graph;

// A graph a node calls. Shared: an XLA computation called from many places (a reduce combiner)
// is one graph, not a copy per call site.
struct Subgraph {
  std::string attr_name;  // "then_branch", "body", ...
  std::shared_ptr<Graph> graph;
};

struct Node {
  NodeId id = kNoNode;
  std::string name;
  std::string domain;  // "" for the default domain of the format (ai.onnx for ONNX)
  std::string op_type;
  // The op as the framework wrote it (`aten.linear.default`, TensorFlow `Conv2D`, Keras `Dense`)
  // when a frontend translated it into the canonical op above that the analyses understand;
  // empty when domain::op_type is already the model's own op. Messages show it.
  std::string framework_op;
  OpKind kind = OpKind::kUnknown;
  // Which op it is and what it does, whatever the spelling (ir/op.h), and how a control-flow op
  // feeds its regions; recorded with `support` by AnnotateOpSupport. Analyses read these, never
  // domain/op_type.
  Op op = Op::kOther;
  OpTraits traits;
  Boxed<ControlFlow> control;
  // Whether the op runs on the device, decided by the frontend from its op tables
  // (AnnotateOpSupport); kUnknownOp until then.
  OpSupport support = OpSupport::kUnknownOp;
  // XLA dimension numbers of a dot / dim_labels of a convolution, when the op carries them
  // (FillGeometry); ONNX-shaped MatMul/Gemm/Conv have neither.
  Boxed<DotDims> dot;
  Boxed<ConvDims> conv;
  // The window of a pooling op, per dim it covers (ONNX kernel_shape: the spatial dims; an XLA
  // reduce-window's `window={size=...}`: every dim); absent for a global pool.
  Boxed<std::vector<std::int64_t>> window;
  std::vector<ValueId> inputs;  // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;
  std::vector<Attribute> attrs;  // in the order the model lists them
  std::vector<Subgraph> subgraphs;
  SourceLoc loc;

  const Attribute* FindAttr(std::string_view attr_name) const;
  std::optional<std::int64_t> IntAttr(std::string_view attr_name) const;
  std::optional<std::vector<std::int64_t>> IntsAttr(std::string_view attr_name) const;
  std::optional<std::string> StringAttr(std::string_view attr_name) const;
  // The framework's op where there is one, else "Conv" for the default domain and
  // "com.microsoft::FusedMatMul" otherwise.
  std::string QualifiedOp() const;
  // A literal compiled into the program and stored in device memory (HLO/StableHLO `constant`,
  // ONNX `Constant`, TensorFlow `Const`); constant-kind ops that compute their value on the device
  // (`iota`, `ConstantOfShape`, `Range`) are not.
  bool IsStoredConstant() const;
  // The i-th input, or kNoValue when absent.
  ValueId input(std::size_t i) const { return i < inputs.size() ? inputs[i] : kNoValue; }
};

class Graph {
 public:
  explicit Graph(std::string name = "main") : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  const std::string& name() const { return name_; }
  // Devices an XLA program says it is SPMD-partitioned over (`num_partitions`, a Shardy mesh); its
  // shapes are then global, not per device. 1 for everything else.
  std::int64_t partitions() const { return partitions_; }
  void set_partitions(std::int64_t n) { partitions_ = n < 1 ? 1 : n; }
  // What the loader decided about the model as a whole (format, framework, batch); default for
  // subgraphs and hand-built graphs.
  const ModelFacts& facts() const { return facts_; }
  ModelFacts& mutable_facts() { return facts_; }

  // Building.
  void Reserve(std::size_t values, std::size_t nodes);
  ValueId AddValue(std::string value_name, TensorType type, ValueOrigin origin);
  // AddValue for a name that must be new: nullopt, and nothing added, when a value already holds
  // it (one probe of the name index instead of FindValue's and AddValue's two).
  std::optional<ValueId> AddNewValue(std::string value_name, TensorType type, ValueOrigin origin);
  NodeId AddNode(Node node);  // sets node.id and the producer of its outputs
  // Appends an empty node (its id set) to fill in place, which spares moving a large node into
  // the graph; Finalize sets the producer of its outputs. The reference lasts until the next node
  // is added.
  Node& NewNode();
  void AddInput(ValueId id) { inputs_.push_back(id); }
  void AddOutput(ValueId id) { outputs_.push_back(id); }
  Value& mutable_value(ValueId id) { return values_[static_cast<std::size_t>(id)]; }
  Node& mutable_node(NodeId id) { return nodes_[static_cast<std::size_t>(id)]; }
  // Links users and computes the topological order; fails on a cycle or a dangling id.
  Result<Ok> Finalize();

  // Reading.
  const Value& value(ValueId id) const { return values_[static_cast<std::size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<NodeId>& topo_order() const { return topo_; }
  std::optional<ValueId> FindValue(std::string_view value_name) const;
  // Starts loading the index slot FindValue/AddValue will probe for `value_name`, so that a
  // builder that knows which names come next overlaps their cache misses with its work.
  void PrefetchName(std::string_view value_name) const { by_name_.Prefetch(value_name); }

 private:
  std::string name_;
  std::int64_t partitions_ = 1;
  ModelFacts facts_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<NodeId> topo_;
  // Appends a value without indexing its name (AddValue and AddNewValue index it).
  ValueId PushValue(std::string value_name, TensorType type, ValueOrigin origin);
  // Value names to the first value of each name: open addressing over slots that hold an id and
  // part of the name's hash. Names are compared against values_, so the index stores no strings
  // and stays valid when values_ grows — which is why it is not a StringViewMap, whose keys must
  // not move. (A node-based map of 200k strings made every lookup three cache misses: half of
  // loading a 100k-node model.)
  class NameIndex {
   public:
    void Reserve(std::size_t names, const std::vector<Value>& values);
    // Indexes values[id] under its name unless a value already holds it; returns whether it did.
    bool Insert(ValueId id, const std::vector<Value>& values);
    std::optional<ValueId> Find(std::string_view name, const std::vector<Value>& values) const;
    void Prefetch(std::string_view name) const;

   private:
    struct Slot {
      std::uint32_t tag = 0;
      ValueId id = kNoValue;
    };
    void Rehash(std::size_t slots, const std::vector<Value>& values);
    std::vector<Slot> slots_;
    std::size_t size_ = 0;
  };
  NameIndex by_name_;
};

// Calls fn(graph, node) for every node of `graph` and of all nested subgraphs, each graph in
// topological order, parents before their subgraphs' nodes.
template <typename Fn>
void ForEachNodeDeep(const Graph& graph, Fn&& fn) {
  for (NodeId id : graph.topo_order()) {
    const Node& node = graph.node(id);
    fn(graph, node);
    for (const Subgraph& sub : node.subgraphs) ForEachNodeDeep(*sub.graph, fn);
  }
}

}  // namespace tpudoctor
