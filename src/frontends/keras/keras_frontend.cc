#include <map>
#include <set>

#include "src/frontends/archives.h"
#include "src/frontends/keras/keras_h5.h"
#include "src/frontends/keras/keras_layers.h"
#include "src/frontends/with_op_support.h"
#include "src/support/json_input.h"
#include "src/support/zip_archive.h"
#include "tpudoctor/frontend/keras.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/knowledge/keras_layers.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using keras::InferLayer;
using keras::LayerCall;
using keras::LayerResult;
using nlohmann::json;

constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{64} << 20;
constexpr int kMaxNesting = 32;  // models inside models

bool IsModelClass(std::string_view c) {
  return c == "Sequential" || c == "Functional" || c == "Model";
}

struct Policy {
  DType compute = DType::kFloat32;
  DType variable = DType::kFloat32;
  std::string name = "float32";
};

std::optional<Policy> PolicyNamed(const std::string& name) {
  static const std::map<std::string, std::pair<DType, DType>> kPolicies = {
      {"float32", {DType::kFloat32, DType::kFloat32}},
      {"float64", {DType::kFloat64, DType::kFloat64}},
      {"float16", {DType::kFloat16, DType::kFloat16}},
      {"bfloat16", {DType::kBFloat16, DType::kBFloat16}},
      {"mixed_float16", {DType::kFloat16, DType::kFloat32}},
      {"mixed_bfloat16", {DType::kBFloat16, DType::kFloat32}}};
  auto it = kPolicies.find(name);
  if (it == kPolicies.end()) return std::nullopt;
  return Policy{it->second.first, it->second.second, name};
}

// `"dtype": "float32"`, `{"class_name": "DTypePolicy", "config": {"name": ...}}` (Keras 3),
// `{"class_name": "Policy", "config": {"name": "mixed_bfloat16"}}` (tf-keras), quantized policies
// (their `source_name`).
Policy PolicyOf(const json& cfg, const Policy& inherited) {
  const json* d = Member(cfg, "dtype");
  if (d == nullptr || d->is_null()) return inherited;
  std::string name;
  if (d->is_string()) {
    name = d->get<std::string>();
  } else if (const json* c = Member(*d, "config")) {
    name = StringMember(*c, "name");
    if (const std::string source = StringMember(*c, "source_name"); !source.empty()) name = source;
  }
  return PolicyNamed(name).value_or(inherited);
}

// Tensor references of a layer call: Keras 2 `[["dense", 0, 0, {kwargs}], ...]`, Keras 3
// `{"args": [...], "kwargs": {...}}` with `__keras_tensor__` objects.
struct Ref {
  std::string layer;
  std::int64_t node = 0;
  std::int64_t tensor = 0;
};

std::optional<Ref> RefFromList(const json& v) {
  if (!v.is_array() || v.size() < 3 || !v[0].is_string() || !v[1].is_number_integer() ||
      !v[2].is_number_integer()) {
    return std::nullopt;
  }
  return Ref{v[0].get<std::string>(), v[1].get<std::int64_t>(), v[2].get<std::int64_t>()};
}

void CollectKeras3(const json& v, std::vector<Ref>& out, int depth = 0) {
  if (depth > 16) return;
  if (v.is_object()) {
    if (StringMember(v, "class_name") == "__keras_tensor__") {
      const json* c = Member(v, "config");
      const json* h = c ? Member(*c, "keras_history") : nullptr;
      if (h) {
        if (auto r = RefFromList(*h)) out.push_back(*r);
      }
      return;
    }
    for (const char* key : {"query", "value", "key"}) {
      if (const json* m = Member(v, key)) CollectKeras3(*m, out, depth + 1);
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() != "query" && it.key() != "value" && it.key() != "key")
        CollectKeras3(it.value(), out, depth + 1);
    }
  } else if (v.is_array()) {
    for (const json& e : v) CollectKeras3(e, out, depth + 1);
  }
}

std::vector<Ref> CallRefs(const json& node) {
  std::vector<Ref> refs;
  if (node.is_object()) {  // Keras 3
    if (const json* args = Member(node, "args")) CollectKeras3(*args, refs);
    if (const json* kwargs = Member(node, "kwargs")) CollectKeras3(*kwargs, refs);
    return refs;
  }
  if (!node.is_array()) return refs;
  for (const json& e : node) {  // Keras 2
    auto r = RefFromList(e);
    if (!r) continue;
    refs.push_back(*r);
    if (e.size() > 3 && e[3].is_object()) {
      for (const char* key : {"value", "key"}) {
        if (const json* m = Member(e[3], key)) {
          if (auto kr = RefFromList(*m)) refs.push_back(*kr);
        }
      }
    }
  }
  return refs;
}

// `input_layers` / `output_layers`: one ref or a list of refs.
std::vector<Ref> RefList(const json* v) {
  std::vector<Ref> out;
  if (v == nullptr) return out;
  if (auto one = RefFromList(*v)) return {*one};
  if (v->is_array()) {
    for (const json& e : *v) {
      if (auto r = RefFromList(e)) out.push_back(*r);
    }
  }
  return out;
}

std::string LayerName(const json& layer) {
  std::string name = StringMember(layer, "name");
  if (name.empty()) {
    if (const json* c = Member(layer, "config")) name = StringMember(*c, "name");
  }
  return name;
}

class ModelBuilder {
 public:
  // `keras_version`: what the container says (HDF5 attribute, .keras metadata.json); a
  // `keras_version` in the config itself wins.
  ModelBuilder(const ShapeOptions& options, std::string keras_version, LoadedModel& out)
      : options_(options), keras_version_(std::move(keras_version)), out_(out) {}

  Result<Ok> Build(const json& model) {
    const std::string cls = StringMember(model, "class_name");
    if (cls.empty()) return MakeError("not a Keras model config (no `class_name`)");
    if (std::string v = StringMember(model, "keras_version"); !v.empty())
      keras_version_ = std::move(v);
    if (!keras_version_.empty()) out_.producer = "keras " + keras_version_;
    auto outputs = BuildModel(model, "", nullptr, 0);
    if (!outputs) return outputs.error();
    for (ValueId v : *outputs) g().AddOutput(v);
    ReportProblems();
    if (auto r = g().Finalize(); !r) return r;
    return CheckTensorSizes(g());
  }

 private:
  using Values = std::vector<ValueId>;
  Graph& g() { return out_.graph; }

  Result<Values> BuildModel(const json& model, const std::string& prefix, const Values* inputs,
                            int depth) {
    if (depth > kMaxNesting) return MakeError("models nested more than 32 deep");
    const std::string cls = StringMember(model, "class_name");
    const json* cfg = Member(model, "config");
    const Policy policy = PolicyOf(cfg ? *cfg : json(), policy_);
    const Policy saved = policy_;
    policy_ = policy;
    Result<Values> r = MakeError("");
    if (cls == "Sequential") {
      r = Sequential(model, cfg, prefix, inputs, depth);
    } else if (IsModelClass(cls) && cfg && Member(*cfg, "layers")) {
      r = Functional(*cfg, prefix, inputs, depth);
    } else {
      r = Subclassed(model, prefix, inputs);
    }
    policy_ = saved;
    return r;
  }

  // Sequential: config {"layers": [...]} (or the list itself, Keras 2.0).
  Result<Values> Sequential(const json& model, const json* cfg, const std::string& prefix,
                            const Values* inputs, int depth) {
    const json* layers = cfg == nullptr ? nullptr : cfg->is_array() ? cfg : Member(*cfg, "layers");
    if (layers == nullptr || !layers->is_array()) return MakeError("a Sequential without `layers`");
    Values current;
    if (inputs != nullptr) current = *inputs;
    for (const json& layer : *layers) {
      const std::string cls = StringMember(layer, "class_name");
      const json* lc = Member(layer, "config");
      if (current.empty()) {
        // The first layer says the model's input shape.
        const json* shape = InputShapeOf(lc, &layer, cfg, &model);
        const std::string name = cls == "InputLayer" ? LayerName(layer) : "input";
        current = {AddInput(prefix + name, lc ? *lc : json(), shape)};
        if (cls == "InputLayer") continue;
      } else if (cls == "InputLayer") {
        continue;
      }
      auto out = CallLayer(layer, prefix, current, depth);
      if (!out) return out.error();
      current = *out;
    }
    return current;
  }

  Result<Values> Functional(const json& cfg, const std::string& prefix, const Values* inputs,
                            int depth) {
    const json& layers = *Member(cfg, "layers");
    if (!layers.is_array()) return MakeError("a Functional model whose `layers` is not a list");
    std::map<std::string, std::vector<Values>> made;  // layer → per call, its outputs
    const std::vector<Ref> in_refs = RefList(Member(cfg, "input_layers"));
    // Input layers.
    std::size_t next_input = 0;
    for (const Ref& ref : in_refs) {
      const json* layer = FindLayer(layers, ref.layer);
      if (layer == nullptr) return MakeError("input layer `" + ref.layer + "` is not in `layers`");
      ValueId v;
      if (inputs != nullptr && next_input < inputs->size()) {
        v = (*inputs)[next_input++];
      } else {
        const json* lc = Member(*layer, "config");
        v = AddInput(prefix + ref.layer, lc ? *lc : json(),
                     InputShapeOf(lc, layer, nullptr, nullptr));
      }
      made[ref.layer].push_back({v});
    }
    // Every other layer, each call once its inputs exist (configs list layers in creation order,
    // which is not always topological).
    std::vector<std::pair<const json*, std::size_t>> pending;  // layer, call index
    for (const json& layer : layers) {
      if (StringMember(layer, "class_name") == "InputLayer") continue;
      const json* nodes = Member(layer, "inbound_nodes");
      if (nodes == nullptr || !nodes->is_array()) continue;
      for (std::size_t i = 0; i < nodes->size(); ++i) pending.push_back({&layer, i});
    }
    while (!pending.empty()) {
      bool progress = false;
      std::vector<std::pair<const json*, std::size_t>> later;
      for (const auto& [layer, call] : pending) {
        const json& node = (*Member(*layer, "inbound_nodes"))[call];
        Values args;
        bool ready = true;
        for (const Ref& r : CallRefs(node)) {
          auto it = made.find(r.layer);
          if (it == made.end() || r.node < 0 ||
              static_cast<std::size_t>(r.node) >= it->second.size() || r.tensor < 0 ||
              static_cast<std::size_t>(r.tensor) >=
                  it->second[static_cast<std::size_t>(r.node)].size()) {
            ready = false;
            break;
          }
          args.push_back(
              it->second[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.tensor)]);
        }
        if (!ready) {
          later.push_back({layer, call});
          continue;
        }
        auto out = CallLayer(*layer, prefix, args, depth);
        if (!out) return out.error();
        made[LayerName(*layer)].push_back(*out);
        progress = true;
      }
      if (!progress) {
        return MakeError("layer `" + LayerName(*later.front().first) +
                         "` is called on tensors no layer produces (a dangling or cyclic "
                         "`inbound_nodes`)");
      }
      pending = std::move(later);
    }
    Values outputs;
    for (const Ref& ref : RefList(Member(cfg, "output_layers"))) {
      auto it = made.find(ref.layer);
      if (it == made.end() || ref.node < 0 ||
          static_cast<std::size_t>(ref.node) >= it->second.size() || ref.tensor < 0 ||
          static_cast<std::size_t>(ref.tensor) >=
              it->second[static_cast<std::size_t>(ref.node)].size()) {
        return MakeError("output layer `" + ref.layer + "` is not produced by the model");
      }
      outputs.push_back(
          it->second[static_cast<std::size_t>(ref.node)][static_cast<std::size_t>(ref.tensor)]);
    }
    return outputs;
  }

  // A subclassed model: only its class and (Keras 3) build_config are in the file.
  Result<Values> Subclassed(const json& model, const std::string& prefix, const Values* inputs) {
    Values in;
    if (inputs != nullptr) {
      in = *inputs;
    } else {
      const json* build = Member(model, "build_config");
      in = {AddInput(prefix + "input", json(),
                     ShapeList(build ? Member(*build, "input_shape") : nullptr))};
    }
    return CallLayer(model, prefix, in, 0);
  }

  static const json* FindLayer(const json& layers, const std::string& name) {
    for (const json& l : layers) {
      if (LayerName(l) == name) return &l;
    }
    return nullptr;
  }

  // The input shape with its batch dim: `batch_shape` (Keras 3), `batch_input_shape` (Keras 2),
  // a Sequential's `build_input_shape`, or the model's `build_config`.
  static const json* InputShapeOf(const json* layer_cfg, const json* layer, const json* model_cfg,
                                  const json* model) {
    for (const json* c : {layer_cfg, model_cfg}) {
      if (c == nullptr) continue;
      for (const char* key : {"batch_shape", "batch_input_shape", "build_input_shape"}) {
        if (const json* s = ShapeList(Member(*c, key))) return s;
      }
    }
    for (const json* o : {layer, model}) {
      const json* build = o ? Member(*o, "build_config") : nullptr;
      if (const json* s = ShapeList(build ? Member(*build, "input_shape") : nullptr)) return s;
    }
    return nullptr;
  }

  // A shape list, or tf-keras's `{"class_name": "__tuple__" | "TensorShape", "items": [...]}`.
  static const json* ShapeList(const json* v) {
    if (v == nullptr) return nullptr;
    if (v->is_array()) return v;
    const json* items = Member(*v, "items");
    return items != nullptr && items->is_array() ? items : nullptr;
  }

  Dim InputDim(const std::string& input, std::size_t axis, const json& v) {
    if (v.is_number_integer()) {
      const auto n = v.get<std::int64_t>();
      return n >= 0 ? Dim::Static(n) : Dim::Unknown();
    }
    const std::string symbol = axis == 0 ? "batch" : input + "_" + std::to_string(axis);
    if (auto it = options_.dims.find(symbol); it != options_.dims.end())
      return Dim::Static(it->second);
    if (axis == 0 && options_.batch) return Dim::Static(*options_.batch);
    return Dim::Symbol(symbol);
  }

  ValueId AddInput(const std::string& name, const json& cfg, const json* shape) {
    TensorType t;
    t.dtype = DType::kFloat32;
    const std::string dtype = StringMember(cfg, "dtype");
    if (!dtype.empty()) t.dtype = ParseDType(dtype).value_or(DType::kFloat32);
    if (shape != nullptr && shape->is_array()) {
      std::vector<Dim> dims;
      for (std::size_t i = 0; i < shape->size(); ++i)
        dims.push_back(InputDim(name, i, (*shape)[i]));
      t.shape = Shape(std::move(dims));
    } else {
      problems_.push_back("input `" + name + "` has no recorded shape");
    }
    const ValueId id = g().AddValue(UniqueName(name), t, ValueOrigin::kGraphInput);
    g().AddInput(id);
    return id;
  }

  std::string UniqueName(const std::string& base) {
    std::string name = base;
    for (int i = 1; g().FindValue(name).has_value() || taken_.count(name); ++i)
      name = base + "_" + std::to_string(i);
    taken_.insert(name);
    return name;
  }

  // One call of a layer on `inputs`: nested models inline; every other layer becomes the nodes
  // its shape rule emits.
  Result<Values> CallLayer(const json& layer, const std::string& prefix, const Values& inputs,
                           int depth) {
    const std::string cls = StringMember(layer, "class_name");
    const std::string name = LayerName(layer);
    const json* cfg = Member(layer, "config");
    if (IsModelClass(cls) && cfg != nullptr && (cfg->is_array() || Member(*cfg, "layers")))
      return BuildModel(layer, prefix + name + "/", &inputs, depth + 1);
    const Policy policy = PolicyOf(cfg ? *cfg : json(), policy_);
    LayerCall call;
    call.class_name = cls;
    call.config = cfg;
    call.compute = policy.compute;
    call.variable = policy.variable;
    for (ValueId v : inputs) call.inputs.push_back(g().value(v).type);
    RecoverInputShape(layer, call);
    // A class the file's Keras version does not define is a custom layer, even when another
    // version has a built-in of that name.
    const bool builtin = KerasVersionDefines(cls, keras_version_);
    const KerasLayerInfo& info = LookupKerasLayer(builtin ? std::string_view(cls) : "");
    const LayerResult r = InferLayer(info.shape_rule, info.canonical, info.info.kind, call);
    if (!r.problem.empty())
      problems_.push_back("`" + prefix + name + "` (" + cls + "): " + r.problem);
    return Emit(r, prefix + name, cls, inputs, builtin);
  }

  // Keras 3 records each layer's input shape in `build_config`: use it when ours is unknown (after
  // a custom layer).
  void RecoverInputShape(const json& layer, LayerCall& call) {
    if (call.inputs.empty() || call.inputs[0].shape.rank_known()) return;
    const json* build = Member(layer, "build_config");
    const json* shape = ShapeList(build ? Member(*build, "input_shape") : nullptr);
    if (shape == nullptr) return;
    std::vector<Dim> dims;
    for (std::size_t i = 0; i < shape->size(); ++i) dims.push_back(InputDim("", i, (*shape)[i]));
    call.inputs[0].shape = Shape(std::move(dims));
  }

  Result<Values> Emit(const LayerResult& r, const std::string& name, const std::string& cls,
                      const Values& inputs, bool builtin) {
    // Weights once per layer, shared by its calls.
    auto [it, fresh] = weights_.try_emplace(name);
    if (fresh) {
      for (const keras::Weight& w : r.weights)
        it->second.push_back(
            g().AddValue(UniqueName(name + "/" + w.name), w.type, ValueOrigin::kInitializer));
    }
    const std::vector<ValueId>& weights = it->second;
    const int call = calls_[name]++;
    const std::string base = call == 0 ? name : name + "@" + std::to_string(call);
    Values pool = inputs;
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
      const keras::Stage& st = r.stages[s];
      Node n;
      n.name = r.stages.size() == 1 ? base : base + "/" + std::to_string(s);
      n.framework_op = cls;
      n.domain = !st.op.empty() ? "" : builtin ? "keras" : std::string(kKerasCustomDomain);
      n.op_type = st.op.empty() ? cls : st.op;
      n.kind = st.kind;
      n.attrs = st.attrs;
      n.loc.scope = name;
      std::vector<ValueId> ws;
      for (int w : st.weights) {
        if (w >= 0 && static_cast<std::size_t>(w) < weights.size())
          ws.push_back(weights[static_cast<std::size_t>(w)]);
      }
      if (st.weights_first) n.inputs = ws;
      for (int i : st.inputs) {
        if (i >= 0 && static_cast<std::size_t>(i) < pool.size())
          n.inputs.push_back(pool[static_cast<std::size_t>(i)]);
      }
      if (!st.weights_first) n.inputs.insert(n.inputs.end(), ws.begin(), ws.end());
      const ValueId out = g().AddValue(UniqueName(n.name), st.output, ValueOrigin::kNodeOutput);
      n.outputs = {out};
      g().AddNode(std::move(n));
      pool.push_back(out);
    }
    Values outputs;
    for (int o : r.outputs) {
      if (o >= 0 && static_cast<std::size_t>(o) < pool.size())
        outputs.push_back(pool[static_cast<std::size_t>(o)]);
    }
    return outputs;
  }

  void ReportProblems() {
    if (problems_.empty()) return;
    Diagnostic d;
    d.code = "LOAD001";
    d.severity = Severity::kNote;
    d.message =
        Plural(static_cast<std::int64_t>(problems_.size()), "layer's shape", "layers' shapes") +
        " could not be inferred from the config; sizes and costs after them are partial";
    for (std::size_t i = 0; i < problems_.size() && i < 5; ++i) d.notes.push_back(problems_[i]);
    out_.diagnostics.push_back(std::move(d));
  }

  const ShapeOptions& options_;
  std::string keras_version_;  // "2.15.0", "3.6.0"; empty when the file does not say
  LoadedModel& out_;
  Policy policy_;
  std::map<std::string, std::vector<ValueId>> weights_;
  std::map<std::string, int> calls_;
  std::set<std::string> taken_;
  std::vector<std::string> problems_;
};

bool LooksLikeKerasJson(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, 1 << 16);
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return false;
  for (const char* model : {"\"Sequential\"", "\"Functional\"", "\"Model\""}) {
    if (head.find(model) != std::string_view::npos &&
        head.find("\"class_name\"") != std::string_view::npos)
      return true;
  }
  return head.find("\"keras_version\"") != std::string_view::npos;
}

}  // namespace

bool IsKerasArchive(const ZipArchive& zip) {
  return zip.Find("config.json") != nullptr && zip.Find("metadata.json") != nullptr;
}

int SniffKeras(const Source& source) {
  if (LooksLikeKerasJson(source.bytes)) return 80;
  if (keras::LooksLikeHdf5(source.bytes)) return 90;
  if (!LooksLikeZip(source.bytes)) return 0;
  auto zip = ZipArchive::Open(source.bytes, source.display_name);
  return zip && IsKerasArchive(**zip) ? 95 : 0;
}

namespace {

Result<LoadedModel> LoadKerasConfigUnannotated(std::string_view json_text,
                                               const std::string& display_name,
                                               const ShapeOptions& options,
                                               std::string_view keras_version = {}) {
  auto config = ParseJsonInput(json_text, display_name);
  if (!config) return config.error();
  LoadedModel loaded{Graph("main"), "keras", "", {}, {}};
  ModelBuilder builder(options, std::string(keras_version), loaded);
  if (auto r = builder.Build(*config); !r)
    return MakeError(display_name + ": " + r.error().message);
  return loaded;
}

}  // namespace

Result<LoadedModel> LoadKerasConfig(std::string_view json_text, const std::string& display_name,
                                    const ShapeOptions& options) {
  return WithOpSupport(LoadKerasConfigUnannotated(json_text, display_name, options));
}

namespace {

Result<LoadedModel> LoadKerasArchiveUnannotated(const ZipArchive& zip,
                                                const std::string& display_name,
                                                const ShapeOptions& options) {
  const ZipEntry* entry = zip.Find("config.json");
  if (entry == nullptr) {
    return MakeError(display_name + ": a zip archive without `config.json`, so not a .keras model");
  }
  auto text = zip.Read(*entry, kMaxConfigBytes);
  if (!text) return text.error();
  std::string version;  // metadata.json: {"keras_version": "3.6.0", ...}
  if (const ZipEntry* meta = zip.Find("metadata.json")) {
    if (auto m = zip.Read(*meta, 1 << 20)) {
      if (auto j = ParseJsonInput(*m, "metadata.json")) version = StringMember(*j, "keras_version");
    }
  }
  return LoadKerasConfigUnannotated(*text, display_name + ": config.json", options, version);
}

}  // namespace

Result<LoadedModel> LoadKerasArchive(const ZipArchive& zip, const std::string& display_name,
                                     const ShapeOptions& options) {
  return WithOpSupport(LoadKerasArchiveUnannotated(zip, display_name, options));
}

namespace {

Result<LoadedModel> LoadKerasUnannotated(const Source& source, const ShapeOptions& options) {
  const std::string& file = source.display_name;
  if (keras::LooksLikeHdf5(source.bytes)) {
    auto h5 = keras::ReadH5Config(source.bytes, file);
    if (!h5) return h5.error();
    auto loaded = LoadKerasConfigUnannotated(h5->model_config, file + ": model_config", options,
                                             h5->keras_version);
    if (loaded) loaded->format = "keras-h5";
    return loaded;
  }
  if (!LooksLikeZip(source.bytes)) return LoadKerasConfigUnannotated(source.bytes, file, options);
  auto zip = ZipArchive::Open(source.bytes, file);
  if (!zip) return zip.error();
  return LoadKerasArchiveUnannotated(**zip, file, options);
}

}  // namespace

Result<LoadedModel> LoadKeras(const Source& source, const ShapeOptions& options) {
  return WithOpSupport(LoadKerasUnannotated(source, options));
}

}  // namespace tpudoctor
