#include <nlohmann/json.hpp>

#include "tpudoctor/report/render.h"

namespace tpudoctor {
namespace {

using nlohmann::ordered_json;

ordered_json LocationJson(const Location& loc) {
  ordered_json j = ordered_json::object();
  if (!loc.graph.empty()) j["graph"] = loc.graph;
  if (!loc.node.empty()) j["node"] = loc.node;
  if (!loc.op.empty()) j["op"] = loc.op;
  if (!loc.value.empty()) j["value"] = loc.value;
  if (!loc.scope.empty()) j["scope"] = loc.scope;
  if (!loc.file.empty()) j["file"] = loc.file;
  if (loc.line > 0) j["line"] = loc.line;
  if (loc.column > 0) j["column"] = loc.column;
  if (loc.cell > 0) j["cell"] = loc.cell;
  return j;
}

ordered_json ValuesJson(const std::vector<ValueSummary>& values) {
  ordered_json arr = ordered_json::array();
  for (const auto& v : values) arr.push_back({{"name", v.name}, {"type", v.type}});
  return arr;
}

ordered_json ReportJson(const Report& r) {
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = {{"name", "tpu-doctor"}, {"version", kToolVersion}};
  j["model"] = {
      {"path", r.model}, {"format", r.format}, {"producer", r.producer}, {"nodes", r.node_count}};
  j["target"] = {{"name", r.target}, {"display_name", r.target_display}};
  if (!r.slice.empty()) j["target"]["slice"] = r.slice;
  j["verdict"] = std::string(NameOf(r.verdict));
  j["summary"] = {{"errors", r.errors}, {"warnings", r.warnings}, {"notes", r.notes}};
  j["shape_notes"] = r.shape_notes;
  j["flag_notes"] = r.flag_notes;
  j["inputs"] = ValuesJson(r.inputs);
  j["outputs"] = ValuesJson(r.outputs);
  ordered_json ops = ordered_json::array();
  for (const auto& row : r.op_summary) {
    ops.push_back({{"op", row.op},
                   {"count", row.count},
                   {"status", row.worst ? std::string(NameOf(*row.worst)) : "ok"},
                   {"codes", row.codes}});
  }
  j["op_summary"] = ops;
  ordered_json findings = ordered_json::array();
  for (const Diagnostic& d : r.findings) {
    ordered_json f;
    f["code"] = d.code;
    f["severity"] = std::string(NameOf(d.severity));
    f["message"] = d.message;
    f["location"] = LocationJson(d.location);
    f["notes"] = d.notes;
    if (d.occurrences > 1) f["occurrences"] = d.occurrences;
    if (d.fix) {
      f["fix"] = {{"description", d.fix->description},
                  {"applicability", std::string(NameOf(d.fix->applicability))}};
    }
    findings.push_back(f);
  }
  j["findings"] = findings;
  return j;
}

std::string Dump(const ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string RenderJson(const Report& r) { return Dump(ReportJson(r)); }

std::string RenderJsonAll(std::span<const Report> reports) {
  if (reports.size() == 1) return RenderJson(reports.front());
  const RunSummary s = Summarize(reports);
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = {{"name", "tpu-doctor"}, {"version", kToolVersion}};
  j["summary"] = {{"models", s.models},
                  {"scripts", s.scripts},
                  {"blocked", s.blocked},
                  {"runs_with_warnings", s.with_warnings},
                  {"ready", s.ready}};
  ordered_json all = ordered_json::array();
  for (const Report& r : reports) {
    ordered_json one = ReportJson(r);
    one.erase("schema_version");
    one.erase("tool");
    all.push_back(std::move(one));
  }
  j["reports"] = std::move(all);
  return Dump(j);
}

}  // namespace tpudoctor
