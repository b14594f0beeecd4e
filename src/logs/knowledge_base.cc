#include "src/logs/knowledge_base.h"

#include <hs/hs.h>

#include <nlohmann/json.hpp>

#include "tpudoctor/support/embedded.h"

namespace tpudoctor::logs {
namespace {

using nlohmann::json;

std::unique_ptr<RE2> Compile(const std::string& pattern, bool caseless, std::string& error) {
  RE2::Options options;
  options.set_case_sensitive(!caseless);
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) error = "bad pattern `" + pattern + "`: " + re->error();
  return re;
}

std::vector<std::pair<std::string, double>> Bounds(const json& j, const char* key) {
  std::vector<std::pair<std::string, double>> out;
  if (auto it = j.find(key); it != j.end()) {
    for (const auto& [field, value] : it->items()) out.emplace_back(field, value.get<double>());
  }
  return out;
}

std::string ParseSignature(const json& j, Signature& s) {
  s.info.id = j.at("id").get<std::string>();
  const std::string kind = j.value("kind", "cause");
  s.kind = kind == "framework" ? SignatureKind::kFramework
           : kind == "version" ? SignatureKind::kVersion
                               : SignatureKind::kCause;
  s.info.category = j.value("category", "");
  s.info.severity = ParseSeverity(j.value("severity", "error")).value_or(Severity::kError);
  s.info.title = j.value("title", "");
  s.keywords = j.at("keywords").get<std::vector<std::string>>();
  s.caseless = j.value("caseless", false);
  std::string error;
  for (const auto& p : j.at("patterns")) {
    s.patterns.push_back(Compile(p.get<std::string>(), s.caseless, error));
    if (!error.empty()) return s.info.id + ": " + error;
  }
  if (auto it = j.find("after"); it != j.end()) {
    s.after = Compile(it->at("pattern").get<std::string>(), s.caseless, error);
    if (!error.empty()) return s.info.id + ": " + error;
    s.after_keywords = it->at("keywords").get<std::vector<std::string>>();
    s.within = it->value("within", 3);
  }
  s.min_values = Bounds(j, "min");
  s.max_values = Bounds(j, "max");
  s.rank = j.value("rank", 0);
  s.secondary = j.value("secondary", false);
  s.fallback = j.value("fallback", false);
  s.structural = j.value("structural", false);
  s.advice = j.value("advice", "");
  s.explanation = j.value("explanation", "");
  s.fix = j.value("fix", "");
  if (auto it = j.find("fixes"); it != j.end() && it->is_object()) {
    for (const auto& [framework, text] : it->items()) {
      if (text.is_string()) s.fixes[framework] = text.get<std::string>();
    }
  }
  s.framework = j.value("framework", "");
  if (auto it = j.find("examples"); it != j.end()) {
    s.info.match_examples = it->value("match", std::vector<std::string>{});
    s.info.no_match_examples = it->value("no_match", std::vector<std::string>{});
  }
  if (s.keywords.empty()) return s.info.id + ": a signature needs at least one keyword";
  return {};
}

// Compiles the literals (all, or those with `only[i]`) into a Vectorscan database whose match ids
// are the literals' indices.
hs_database* CompileLiterals(const std::vector<std::string>& literals,
                             const std::vector<unsigned>& flags, const std::vector<bool>* only,
                             std::string& error) {
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lens;
  std::vector<unsigned> ids, fl;
  for (std::size_t i = 0; i < literals.size(); ++i) {
    if (only != nullptr && !(*only)[i]) continue;
    ptrs.push_back(literals[i].c_str());
    lens.push_back(literals[i].size());
    ids.push_back(static_cast<unsigned>(i));
    fl.push_back(flags[i]);
  }
  hs_database* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(ptrs.data(), fl.data(), ids.data(), lens.data(),
                           static_cast<unsigned>(ptrs.size()), HS_MODE_BLOCK, nullptr, &db,
                           &err) != HS_SUCCESS) {
    error = std::string("cannot compile the keyword set: ") + (err ? err->message : "?");
    if (err != nullptr) hs_free_compile_error(err);
    return nullptr;
  }
  return db;
}

}  // namespace

const KnowledgeBase& KnowledgeBase::Get() {
  static const KnowledgeBase* kb = new KnowledgeBase();
  return *kb;
}

KnowledgeBase::~KnowledgeBase() {
  if (db_ != nullptr) hs_free_database(db_);
  if (cause_db_ != nullptr) hs_free_database(cause_db_);
}

KnowledgeBase::KnowledgeBase() {
  auto data = FindEmbedded("data/logs/signatures.json");
  if (!data) {
    load_error_ = "data/logs/signatures.json is not embedded";
    return;
  }
  json root = json::parse(*data, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    load_error_ = "data/logs/signatures.json is not valid JSON";
    return;
  }
  try {
    for (const auto& j : root.at("signatures")) {
      Signature s;
      if (std::string err = ParseSignature(j, s); !err.empty()) {
        load_error_ = err;
        return;
      }
      signatures_.push_back(std::move(s));
    }
    if (auto it = root.find("op_fixes"); it != root.end()) {
      op_fixes_ = it->get<std::map<std::string, std::string>>();
    }
  } catch (const json::exception& e) {
    load_error_ = std::string("data/logs/signatures.json: ") + e.what();
    return;
  }
  // One literal per (signature, keyword); Vectorscan reports the literal id.
  std::vector<std::string> literals;
  std::vector<unsigned> flags;
  for (std::size_t i = 0; i < signatures_.size(); ++i) {
    const Signature& s = signatures_[i];
    auto add = [&](const std::string& kw, bool is_after) {
      literals.push_back(kw);
      flags.push_back(s.caseless ? HS_FLAG_CASELESS : 0);
      keyword_targets_.push_back({{static_cast<int>(i), is_after}});
    };
    for (const std::string& kw : s.keywords) add(kw, false);
    for (const std::string& kw : s.after_keywords) add(kw, true);
  }
  db_ = CompileLiterals(literals, flags, /*only=*/nullptr, load_error_);
  std::vector<bool> is_cause;
  for (const auto& targets : keyword_targets_) {
    is_cause.push_back(signatures_[static_cast<std::size_t>(targets.front().signature)].kind ==
                       SignatureKind::kCause);
  }
  if (load_error_.empty()) cause_db_ = CompileLiterals(literals, flags, &is_cause, load_error_);
}

}  // namespace tpudoctor::logs
