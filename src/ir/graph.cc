#include "tpudoctor/ir/graph.h"

#include <algorithm>
#include <queue>
#include <utility>

namespace tpudoctor {

const Attribute* Node::FindAttr(std::string_view attr_name) const {
  for (const Attribute& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

std::optional<std::int64_t> Node::IntAttr(std::string_view attr_name) const {
  const Attribute* a = FindAttr(attr_name);
  if (a == nullptr) return std::nullopt;
  if (const auto* v = std::get_if<std::int64_t>(&a->value)) return *v;
  return std::nullopt;
}

std::optional<std::vector<std::int64_t>> Node::IntsAttr(std::string_view attr_name) const {
  const Attribute* a = FindAttr(attr_name);
  if (a == nullptr) return std::nullopt;
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&a->value)) return *v;
  return std::nullopt;
}

std::optional<std::string> Node::StringAttr(std::string_view attr_name) const {
  const Attribute* a = FindAttr(attr_name);
  if (a == nullptr) return std::nullopt;
  if (const auto* v = std::get_if<std::string>(&a->value)) return *v;
  return std::nullopt;
}

std::optional<std::vector<std::int64_t>> Value::StaticInts() const {
  if (!known_ints) return std::nullopt;
  std::vector<std::int64_t> out;
  out.reserve(known_ints->size());
  for (const Dim& d : *known_ints) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

bool Node::IsStoredConstant() const {
  if (kind != OpKind::kConstant) return false;
  const std::string& op = framework_op.empty() ? op_type : framework_op;
  return op == "constant" || op == "Constant" || op == "Const";
}

std::string Node::QualifiedOp() const {
  if (!framework_op.empty()) return framework_op;
  if (domain.empty() || domain == "ai.onnx") return op_type;
  return domain + "::" + op_type;
}

void Graph::Reserve(std::size_t values, std::size_t nodes) {
  values_.reserve(values);
  nodes_.reserve(nodes);
  by_name_.Reserve(values, values_);
}

ValueId Graph::PushValue(std::string value_name, TensorType type, ValueOrigin origin) {
  const auto id = static_cast<ValueId>(values_.size());
  Value v;
  v.id = id;
  v.name = std::move(value_name);
  v.type = std::move(type);
  v.origin = origin;
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::AddValue(std::string value_name, TensorType type, ValueOrigin origin) {
  const ValueId id = PushValue(std::move(value_name), std::move(type), origin);
  if (!values_.back().name.empty()) by_name_.Insert(id, values_);
  return id;
}

std::optional<ValueId> Graph::AddNewValue(std::string value_name, TensorType type,
                                          ValueOrigin origin) {
  const ValueId id = PushValue(std::move(value_name), std::move(type), origin);
  if (values_.back().name.empty() || by_name_.Insert(id, values_)) return id;
  values_.pop_back();
  return std::nullopt;
}

NodeId Graph::AddNode(Node node) {
  const auto id = static_cast<NodeId>(nodes_.size());
  node.id = id;
  for (ValueId out : node.outputs) {
    if (out >= 0 && static_cast<std::size_t>(out) < values_.size()) {
      values_[static_cast<std::size_t>(out)].producer = id;
    }
  }
  nodes_.push_back(std::move(node));
  return id;
}

Node& Graph::NewNode() {
  Node& node = nodes_.emplace_back();
  node.id = static_cast<NodeId>(nodes_.size() - 1);
  return node;
}

std::optional<ValueId> Graph::FindValue(std::string_view value_name) const {
  return by_name_.Find(value_name, values_);
}

namespace {
std::uint64_t NameHash(std::string_view name) { return std::hash<std::string_view>{}(name); }
std::uint32_t TagOf(std::uint64_t hash) { return static_cast<std::uint32_t>(hash >> 32); }
}  // namespace

void Graph::NameIndex::Reserve(std::size_t names, const std::vector<Value>& values) {
  std::size_t slots = 16;
  while (slots < 2 * names) slots *= 2;
  if (slots > slots_.size()) Rehash(slots, values);
}

void Graph::NameIndex::Rehash(std::size_t slots, const std::vector<Value>& values) {
  std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slots));
  const std::size_t mask = slots - 1;
  for (const Slot& s : old) {
    if (s.id == kNoValue) continue;
    std::size_t i = NameHash(values[static_cast<std::size_t>(s.id)].name) & mask;
    while (slots_[i].id != kNoValue) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

bool Graph::NameIndex::Insert(ValueId id, const std::vector<Value>& values) {
  if (2 * (size_ + 1) > slots_.size()) Rehash(std::max<std::size_t>(16, 2 * slots_.size()), values);
  const std::string& name = values[static_cast<std::size_t>(id)].name;
  const std::uint64_t hash = NameHash(name);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.id == kNoValue) {
      s = {TagOf(hash), id};
      ++size_;
      return true;
    }
    if (s.tag == TagOf(hash) && values[static_cast<std::size_t>(s.id)].name == name) return false;
  }
}

std::optional<ValueId> Graph::NameIndex::Find(std::string_view name,
                                              const std::vector<Value>& values) const {
  if (slots_.empty()) return std::nullopt;
  const std::uint64_t hash = NameHash(name);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kNoValue) return std::nullopt;
    if (s.tag == TagOf(hash) && values[static_cast<std::size_t>(s.id)].name == name) return s.id;
  }
}

void Graph::NameIndex::Prefetch(std::string_view name) const {
  if (slots_.empty()) return;
  __builtin_prefetch(&slots_[NameHash(name) & (slots_.size() - 1)]);
}

Result<Ok> Graph::Finalize() {
  const auto nvalues = static_cast<ValueId>(values_.size());
  auto valid = [&](ValueId v) { return v == kNoValue || (v >= 0 && v < nvalues); };
  for (Value& v : values_) v.users.clear();
  for (const Node& n : nodes_) {
    for (ValueId in : n.inputs) {
      if (!valid(in))
        return MakeError("node `" + n.name + "` refers to a value that does not exist");
      if (in == kNoValue) continue;
      auto& users = values_[static_cast<std::size_t>(in)].users;
      if (users.empty() || users.back() != n.id) users.push_back(n.id);
    }
    for (ValueId out : n.outputs) {
      if (out == kNoValue || !valid(out)) {
        return MakeError("node `" + n.name + "` has an invalid output");
      }
      values_[static_cast<std::size_t>(out)].producer = n.id;
    }
  }
  // Kahn's algorithm, smallest node id first, so the order is deterministic and follows the
  // file's order whenever the file is already sorted.
  std::vector<int> pending(nodes_.size(), 0);
  bool sorted = true;  // every node reads only values of nodes before it
  for (const Node& n : nodes_) {
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const NodeId producer = values_[static_cast<std::size_t>(in)].producer;
      if (producer == kNoNode) continue;
      ++pending[static_cast<std::size_t>(n.id)];
      sorted &= producer < n.id;
    }
  }
  topo_.clear();
  topo_.reserve(nodes_.size());
  // Already in order (as exporters and XLA write them): the order below would be the ids.
  if (sorted) {
    for (const Node& n : nodes_) topo_.push_back(n.id);
    return Ok{};
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (const Node& n : nodes_) {
    if (pending[static_cast<std::size_t>(n.id)] == 0) ready.push(n.id);
  }
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    topo_.push_back(id);
    for (ValueId out : nodes_[static_cast<std::size_t>(id)].outputs) {
      for (NodeId user : values_[static_cast<std::size_t>(out)].users) {
        const Node& u = nodes_[static_cast<std::size_t>(user)];
        // A user consumes the same value once per occurrence in its input list.
        int times = static_cast<int>(std::count(u.inputs.begin(), u.inputs.end(), out));
        if ((pending[static_cast<std::size_t>(user)] -= times) == 0) ready.push(user);
      }
    }
  }
  if (topo_.size() != nodes_.size()) {
    for (const Node& n : nodes_) {
      if (pending[static_cast<std::size_t>(n.id)] > 0) {
        return MakeError("graph `" + name_ + "` has a cycle through node `" + n.name + "`");
      }
    }
    return MakeError("graph `" + name_ + "` has a cycle");
  }
  return Ok{};
}

}  // namespace tpudoctor
