// ScriptRule: one rule over a Python training script (`tpu-doctor check train.py`). Each rule is
// one file in src/script/rules/, registered in src/script/registry.cc (sorted by code). A rule
// that finds the same problem a model check finds in a graph uses that check's code (PIPE004 is a
// batch without drop_remainder in a tf.data graph or in the script that builds it).
//
// Rules read the ScriptModel and report through ScriptContext::Report, which locates the finding
// at a node (file, cell, line, column) and carries the fix's edits.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/script/script_model.h"
#include "tpudoctor/diag/diagnostic.h"

namespace tpudoctor::script {

struct TfDataFacts;  // rules/tfdata.h

struct ScriptContext {
  ScriptContext(const ScriptModel& model, std::string file, DiagnosticSink& sink);
  // The same script, reporting to another sink; what is computed once per script is shared
  // (rules run side by side, each with its own sink).
  ScriptContext(const ScriptContext& other, DiagnosticSink& sink);
  ~ScriptContext();

  const ScriptModel& model;
  std::string file;  // as the user named it
  DiagnosticSink& sink;

  // What the tf.data rules share (the training inputs and the calls of training pipelines),
  // computed on first use, once per script (by whichever rule asks first; the others wait).
  const TfDataFacts& TfData() const;

  // A finding of `code` located at `at`, for the rule to complete (notes, fix) and Add.
  Diagnostic Finding(std::string_view code, Severity severity, Node at, std::string message) const;
  void Add(Diagnostic d) const { sink.Add(std::move(d)); }
  // The spelling of tf.data.AUTOTUNE this file can use: a module-level name bound to it
  // (`AUTOTUNE = tf.data.AUTOTUNE`), else `<alias>.data.AUTOTUNE` through the alias the file
  // imported tensorflow as; "" when neither exists (the fix is then described, not applied).
  std::string Autotune() const;

 private:
  struct Shared;  // what is computed once per script
  std::shared_ptr<Shared> shared_;
};

class ScriptRule {
 public:
  virtual ~ScriptRule() = default;
  virtual std::string_view code() const = 0;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  virtual void Run(const ScriptContext& c) const = 0;
};

#define TPUD_SCRIPT_RULE(CODE, NAME, SUMMARY)             \
  std::string_view code() const override { return CODE; } \
  std::string_view name() const override { return NAME; } \
  std::string_view summary() const override { return SUMMARY; }

// Every script rule, sorted by code.
const std::vector<std::unique_ptr<ScriptRule>>& AllScriptRules();

// Edits that fixes share.
// Adds `keyword=value` as the call's last argument.
TextEdit AddKeyword(const Call& call, std::string_view keyword, std::string_view value);
// Removes the keyword argument `name` of the call (with the comma that separates it).
TextEdit RemoveKeyword(const Call& call, std::string_view name);
// Replaces a node's text.
TextEdit Replace(Node node, std::string replacement);

// Whether a function (index into ScriptModel::functions) or one it is nested in is traced by JAX.
bool InJaxTrace(const ScriptModel& model, int function);

}  // namespace tpudoctor::script
