// The compiled log-signature knowledge base: data/logs/signatures.json parsed once, its RE2
// patterns compiled, and one Vectorscan literal database over every keyword. Private to src/logs.
#pragma once

#include <re2/re2.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tpudoctor/logs/logs.h"

struct hs_database;
struct hs_scratch;

namespace tpudoctor::logs {

enum class SignatureKind { kCause, kFramework, kVersion };

struct Signature {
  SignatureInfo info;
  SignatureKind kind = SignatureKind::kCause;
  std::vector<std::string> keywords;
  bool caseless = false;
  std::vector<std::unique_ptr<RE2>> patterns;
  // Context: the match counts only when `after` matched within the `within` lines before it.
  std::unique_ptr<RE2> after;
  std::vector<std::string> after_keywords;
  int within = 0;
  std::vector<std::pair<std::string, double>> min_values;  // numeric extracted fields
  std::vector<std::pair<std::string, double>> max_values;
  int rank = 0;
  bool secondary = false;  // a likely knock-on when a primary cause exists
  bool fallback = false;   // reported only when nothing else was found; evidence is the last line
  // Shows that the run failed but not why (an internal check of XLA or its runtime failed): the
  // scored layer chooses the category, with this signature's lines as the evidence.
  bool structural = false;
  std::string advice;  // "hbm", "xla_type", "tf_dtype", "op" or "": how to enrich the fix
  std::string explanation;
  std::string fix;
  // The fix in one framework's terms ("jax", "tensorflow", "pytorch/xla"), used instead of `fix`
  // when the log says which framework it came from.
  std::map<std::string, std::string, std::less<>> fixes;
  std::string framework;  // kFramework: "jax", "tensorflow", "pytorch/xla"
};

struct KeywordTarget {
  int signature = 0;
  bool is_after = false;
};

class KnowledgeBase {
 public:
  static const KnowledgeBase& Get();
  ~KnowledgeBase();

  const std::vector<Signature>& signatures() const { return signatures_; }
  const std::vector<std::vector<KeywordTarget>>& keyword_targets() const {
    return keyword_targets_;
  }
  // Every keyword (causes, framework and version detectors) / the cause keywords only. Scanners
  // use the first for the head of each file, where frameworks announce themselves, and the second
  // for the rest, so common words like `jax` do not cost a regex match on every line.
  const hs_database* database() const { return db_; }
  const hs_database* cause_database() const { return cause_db_; }
  const std::map<std::string, std::string>& op_fixes() const { return op_fixes_; }
  // Non-empty when the embedded data failed to load: a build bug that tests catch.
  const std::string& load_error() const { return load_error_; }

 private:
  KnowledgeBase();
  std::vector<Signature> signatures_;
  std::vector<std::vector<KeywordTarget>> keyword_targets_;  // by Vectorscan literal id
  hs_database* db_ = nullptr;
  hs_database* cause_db_ = nullptr;
  std::map<std::string, std::string> op_fixes_;
  std::string load_error_;
};

}  // namespace tpudoctor::logs
