// The HTML report: one file a person opens in a browser or a notebook shows inline. Everything is
// inline (CSS, SVG charts); there is no script and nothing is fetched, so it renders the same
// offline, in a sandboxed viewer, or as an email attachment. Every string from the model is
// escaped.
#include <algorithm>

#include "tpudoctor/report/render.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

std::string Esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// `identifiers` in backticks become <code>.
std::string Prose(std::string_view s) {
  std::string out;
  bool open = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '`') {
      out += open ? "</code>" : "<code>";
      open = !open;
      continue;
    }
    out += Esc(s.substr(i, 1));
  }
  if (open) out += "</code>";
  return out;
}

constexpr const char* kStyle = R"(
.tpud{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1f2328;max-width:1100px}
.tpud h1{font-size:20px;margin:0 0 4px}.tpud h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.tpud .sub{color:#59636e;margin-bottom:12px}
.tpud .verdict{display:inline-block;padding:6px 14px;border-radius:6px;font-weight:600;font-size:16px;color:#fff}
.tpud .v-blocked{background:#cf222e}.tpud .v-warn{background:#9a6700}.tpud .v-ready{background:#1a7f37}
.tpud .counts{margin-left:12px;color:#59636e}
.tpud .f{border:1px solid #d0d7de;border-left-width:5px;border-radius:6px;padding:8px 12px;margin:8px 0}
.tpud .f-error{border-left-color:#cf222e}.tpud .f-warning{border-left-color:#bf8700}.tpud .f-note{border-left-color:#0969da}
.tpud .tag{font-weight:600;font-size:12px;text-transform:uppercase;margin-right:6px}
.tpud .t-error{color:#cf222e}.tpud .t-warning{color:#9a6700}.tpud .t-note{color:#0969da}
.tpud .where,.tpud .note{color:#59636e;font-size:13px}.tpud .fix{font-size:13px;margin-top:4px}
.tpud code{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px;background:#f6f8fa;padding:0 3px;border-radius:3px}
.tpud table{border-collapse:collapse;font-size:13px}.tpud th,.tpud td{border-bottom:1px solid #eaeef2;padding:3px 10px;text-align:left}
.tpud td.n{text-align:right;font-variant-numeric:tabular-nums}.tpud .ok{color:#1a7f37}
.tpud .muted{color:#59636e;font-size:13px}
)";

std::string VerdictClass(Verdict v) {
  switch (v) {
    case Verdict::kBlocked:
      return "v-blocked";
    case Verdict::kRunsWithWarnings:
      return "v-warn";
    case Verdict::kReady:
      return "v-ready";
  }
  return "v-ready";
}

std::string Where(const Location& loc) {
  std::vector<std::string> parts;
  if (!loc.node.empty())
    parts.push_back("node <code>" + Esc(loc.node) + "</code>" +
                    (loc.op.empty() ? "" : " (" + Esc(loc.op) + ")"));
  if (!loc.value.empty()) parts.push_back("value <code>" + Esc(loc.value) + "</code>");
  if (!loc.scope.empty()) parts.push_back("layer <code>" + Esc(loc.scope) + "</code>");
  if (!loc.file.empty())
    parts.push_back(Esc(loc.file) + (loc.line > 0 ? ":" + std::to_string(loc.line) : ""));
  if (parts.empty()) return Esc(loc.graph);
  return (loc.graph.empty() ? "" : Esc(loc.graph) + ": ") + Join(parts, ", ");
}

void Header(std::string& out, const Report& r) {
  out += "<h1>" + Esc(r.model) + "</h1>\n<div class=\"sub\">" + Esc(r.format) +
         (r.producer.empty() ? "" : ", " + Esc(r.producer)) + " &middot; on " +
         Esc(r.target_display) + " (<code>" + Esc(r.target) + "</code>) &middot; " +
         Plural(r.node_count, "node", "nodes") + " &middot; tpu-doctor " + kToolVersion +
         "</div>\n";
  const std::string verdict = AsciiUpper(NameOf(r.verdict));
  out += "<div><span class=\"verdict " + VerdictClass(r.verdict) + "\">" + verdict +
         "</span><span class=\"counts\">" + Plural(r.errors, "error", "errors") + ", " +
         Plural(r.warnings, "warning", "warnings") + ", " + Plural(r.notes, "note", "notes") +
         "</span></div>\n";
}

void Findings(std::string& out, const Report& r) {
  out += "<h2>Findings</h2>\n";
  if (r.findings.empty()) {
    out += "<p class=\"ok\">No findings: nothing stands between this model and the target.</p>\n";
    return;
  }
  for (const Diagnostic& d : r.findings) {
    const std::string sev(NameOf(d.severity));
    out += "<div class=\"f f-" + sev + "\"><span class=\"tag t-" + sev + "\">" + sev + " " +
           Esc(d.code) + "</span>" + Prose(d.message) + "\n";
    out += "<div class=\"where\">" + Where(d.location) + "</div>\n";
    for (const std::string& note : d.notes)
      out += "<div class=\"note\">" + Prose(note) + "</div>\n";
    if (d.fix) {
      out += "<div class=\"fix\"><b>fix</b> (" + std::string(NameOf(d.fix->applicability)) +
             "): " + Prose(d.fix->description) + "</div>\n";
    }
    out += "</div>\n";
  }
}

// A horizontal stacked bar of the memory parts against the device's HBM.
void MemoryChart(std::string& out, const Estimate& e) {
  const MemoryBreakdown& m = e.memory;
  const std::vector<std::pair<std::string, double>> parts = {
      {"weights", m.weights},
      {"gradients", m.gradients},
      {"optimizer", m.optimizer_state + m.master_weights},
      {"activations", m.activations},
      {"transients", m.transients},
      {"runtime", m.fixed}};
  static constexpr const char* kColors[] = {"#0969da", "#8250df", "#bf3989",
                                            "#bc4c00", "#9a6700", "#6e7781"};
  const double scale_max = std::max(m.total(), e.hbm_bytes);
  if (scale_max <= 0) return;
  const double width = 760;
  out += "<h2>Memory per device</h2>\n<div class=\"muted\">" + FormatBytes(m.total()) + " of " +
         FormatBytes(e.hbm_bytes) + " HBM" + (e.fits ? "" : " &mdash; <b>does not fit</b>") +
         (m.padding_waste > 0
              ? "; TPU tile padding in the activations: " + FormatBytes(m.padding_waste)
              : "") +
         "</div>\n";
  double x = 10;
  std::string bars;
  std::string legend;
  double lx = 10;
  double ly = 56;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const double w = parts[i].second / scale_max * width;
    if (parts[i].second <= 0) continue;
    const std::string label = parts[i].first + " " + FormatBytes(parts[i].second);
    bars += "<rect x=\"" + FormatFixed(x, 1) + "\" y=\"8\" width=\"" + FormatFixed(w, 1) +
            "\" height=\"26\" fill=\"" + kColors[i] + "\"><title>" + parts[i].first + ": " +
            FormatBytes(parts[i].second) + "</title></rect>\n";
    x += w;
    // 11px sans-serif averages under 6.5px a character; an entry that would overflow wraps.
    const double entry = 14 + 6.5 * static_cast<double>(label.size()) + 18;
    if (lx > 10 && lx + entry > 770) {
      lx = 10;
      ly += 16;
    }
    legend += "<rect x=\"" + FormatFixed(lx, 0) + "\" y=\"" + FormatFixed(ly, 0) +
              "\" width=\"10\" height=\"10\" fill=\"" + kColors[i] + "\"/><text x=\"" +
              FormatFixed(lx + 14, 0) + "\" y=\"" + FormatFixed(ly + 9, 0) +
              "\" font-size=\"11\">" + label + "</text>\n";
    lx += entry;
  }
  out += "<svg role=\"img\" aria-label=\"memory breakdown\" width=\"780\" height=\"" +
         FormatFixed(ly + 16, 0) + "\" xmlns=\"http://www.w3.org/2000/svg\">\n" + bars;
  const double hbm_x = 10 + e.hbm_bytes / scale_max * width;
  out += "<line x1=\"" + FormatFixed(hbm_x, 1) + "\" y1=\"2\" x2=\"" + FormatFixed(hbm_x, 1) +
         "\" y2=\"40\" stroke=\"#cf222e\" stroke-width=\"2\"><title>HBM " +
         FormatBytes(e.hbm_bytes) + "</title></line>\n<text x=\"" +
         FormatFixed(std::max(10.0, hbm_x - 4), 1) +
         "\" y=\"50\" font-size=\"11\" text-anchor=\"end\" fill=\"#cf222e\">HBM " +
         FormatBytes(e.hbm_bytes) + "</text>\n" + legend + "</svg>\n";
}

void TimeChart(std::string& out, const Estimate& e) {
  if (e.top_nodes.empty() || e.step_ms <= 0) return;
  out += "<h2>Where the time goes</h2>\n<div class=\"muted\">step " + FormatMs(e.step_ms) +
         " ms on " + Esc(e.target) + ", " + FormatFixed(e.samples_per_s, 1) + " samples/s, MFU " +
         FormatFixed(e.mfu * 100, 0) + "%</div>\n";
  const double max_ms = e.top_nodes.front().ms;
  const int row = 20;
  out += "<svg role=\"img\" aria-label=\"slowest ops\" width=\"780\" height=\"" +
         std::to_string(static_cast<int>(e.top_nodes.size()) * row + 6) +
         "\" xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\n";
  int y = 2;
  for (const NodeTime& t : e.top_nodes) {
    const double w = max_ms > 0 ? t.ms / max_ms * 380 : 0;
    std::string label = t.op + " " + t.node_name;
    if (label.size() > 52) label = label.substr(0, 49) + "...";
    out += "<text x=\"0\" y=\"" + std::to_string(y + 13) + "\">" + Esc(label) + "</text>";
    out += "<rect x=\"330\" y=\"" + std::to_string(y + 3) + "\" width=\"" + FormatFixed(w, 1) +
           "\" height=\"13\" fill=\"" + (t.compute_bound ? "#0969da" : "#bc4c00") + "\"><title>" +
           (t.compute_bound ? "compute-bound" : "memory-bound") + "</title></rect>";
    out += "<text x=\"" + FormatFixed(336 + w, 1) + "\" y=\"" + std::to_string(y + 13) + "\">" +
           FormatMs(t.ms) + " ms</text>\n";
    y += row;
  }
  out += "</svg>\n<div class=\"muted\">blue: compute-bound, orange: memory-bound</div>\n";
}

void Comparison(std::string& out, const Report& r) {
  if (r.estimates.empty()) return;
  out +=
      "<h2>Per-target comparison</h2>\n<table><tr><th>target</th><th>chips</th><th>fits</th>"
      "<th>max batch</th><th>step ms</th><th>samples/s</th><th>MFU</th><th>memory/device</th>"
      "<th>$/1M samples</th></tr>\n";
  for (const Estimate& e : r.estimates) {
    out += "<tr><td><code>" + Esc(e.target) + "</code></td><td class=\"n\">" +
           std::to_string(e.chips) + "</td><td>" + (e.fits ? "yes" : "<b>no</b>") +
           "</td><td class=\"n\">" + std::to_string(e.max_batch) + "</td><td class=\"n\">" +
           FormatMs(e.step_ms) + "</td><td class=\"n\">" + FormatFixed(e.samples_per_s, 1) +
           "</td><td class=\"n\">" + FormatFixed(e.mfu * 100, 0) + "%</td><td class=\"n\">" +
           FormatBytes(e.memory.total()) + "</td><td class=\"n\">" +
           (e.usd_per_million_samples ? "$" + FormatFixed(*e.usd_per_million_samples, 2) : "-") +
           "</td></tr>\n";
  }
  out += "</table>\n<div class=\"muted\">batch " + std::to_string(r.estimate_batch) +
         " per device, " + (r.train ? "training" : "inference") + ", " +
         std::string(NameOf(r.precision)) + "</div>\n";
}

void OpSummary(std::string& out, const Report& r) {
  out += "<h2>Ops</h2>\n<table><tr><th>op</th><th>count</th><th>status</th></tr>\n";
  for (const OpSummaryRow& row : r.op_summary) {
    const std::string status = row.worst ? "<span class=\"t-" + std::string(NameOf(*row.worst)) +
                                               "\">" + std::string(NameOf(*row.worst)) + " " +
                                               Esc(Join(row.codes, ",")) + "</span>"
                                         : "<span class=\"ok\">ok</span>";
    out += "<tr><td><code>" + Esc(row.op) + "</code></td><td class=\"n\">" +
           std::to_string(row.count) + "</td><td>" + status + "</td></tr>\n";
  }
  out += "</table>\n";
}

// At most this many rows per kind; an XLA training step can take a thousand parameters.
constexpr std::size_t kMaxValueRows = 25;

void ValueRows(std::string& out, const char* kind, const std::vector<ValueSummary>& values) {
  for (std::size_t i = 0; i < values.size() && i < kMaxValueRows; ++i) {
    out += "<tr><td>" + std::string(kind) + "</td><td><code>" + Esc(values[i].name) +
           "</code></td><td><code>" + Esc(values[i].type) + "</code></td></tr>";
  }
  if (values.size() > kMaxValueRows) {
    out += "<tr><td>" + std::string(kind) + "</td><td colspan=\"2\" class=\"muted\">... and " +
           std::to_string(values.size() - kMaxValueRows) + " more</td></tr>";
  }
}

void Shapes(std::string& out, const Report& r) {
  out += "<h2>Inputs and outputs</h2>\n<table>";
  ValueRows(out, "input", r.inputs);
  ValueRows(out, "output", r.outputs);
  out += "</table>\n";
  for (const std::string& note : r.shape_notes)
    out += "<div class=\"note\">" + Prose(note) + "</div>\n";
  for (const std::string& note : r.flag_notes)
    out += "<div class=\"note\">" + Prose(note) + "</div>\n";
}

std::string Body(const Report& r) {
  std::string body = "<div class=\"tpud\">\n";
  Header(body, r);
  Findings(body, r);
  if (r.estimate) {
    MemoryChart(body, *r.estimate);
    TimeChart(body, *r.estimate);
    Comparison(body, r);
  } else {
    body +=
        "<h2>Memory and time</h2>\n<p class=\"muted\">Not estimated: the inputs are not "
        "static (give a batch and the symbolic dims) or shapes depend on data.</p>\n";
  }
  Shapes(body, r);
  OpSummary(body, r);
  body += "</div>\n";
  return body;
}

std::string Page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>tpu-doctor: " +
         Esc(title) + "</title>\n<style>body{margin:24px}" + kStyle +
         ".tpud+.tpud{margin-top:40px;border-top:3px solid #d0d7de;padding-top:16px}"
         "</style></head><body>\n" +
         body + "</body></html>\n";
}

}  // namespace

std::string RenderHtml(const Report& r, bool standalone) {
  if (!standalone) return "<style>" + std::string(kStyle) + "</style>\n" + Body(r);
  return Page(r.model, Body(r));
}

std::string RenderHtmlAll(std::span<const Report> reports) {
  if (reports.size() == 1) return RenderHtml(reports.front());
  const RunSummary s = Summarize(reports);
  std::string body = "<div class=\"tpud\"><h1>" + std::to_string(s.models) +
                     " models</h1><div class=\"sub\">" + SummaryLine(s) + "</div></div>\n";
  for (const Report& r : reports) body += Body(r);
  return Page(std::to_string(s.models) + " models", body);
}

}  // namespace tpudoctor
