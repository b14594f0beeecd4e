#include "config.h"

#include <toml++/toml.h>

#include <fstream>
#include <sstream>

namespace tpudoctor::cli {
namespace {

constexpr std::int64_t kMaxConfigBytes = 1 << 20;

Result<std::string> String(const toml::node& node, const std::string& where) {
  if (auto v = node.value<std::string>()) return *v;
  return MakeError(where + ": expected a string");
}

Result<std::vector<std::string>> Strings(const toml::node& node, const std::string& where) {
  const toml::array* array = node.as_array();
  if (array == nullptr) return MakeError(where + ": expected an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    auto v = item.value<std::string>();
    if (!v) return MakeError(where + ": expected an array of strings");
    out.push_back(*v);
  }
  return out;
}

Result<Ok> Apply(const std::string& key, const toml::node& node, const std::string& where,
                 ProjectConfig& c) {
  auto set_string = [&](std::optional<std::string>& field) -> Result<Ok> {
    auto v = String(node, where);
    if (!v) return v.error();
    field = *v;
    return Ok{};
  };
  auto set_strings = [&](std::optional<std::vector<std::string>>& field) -> Result<Ok> {
    auto v = Strings(node, where);
    if (!v) return v.error();
    field = *v;
    return Ok{};
  };
  if (key == "target") return set_string(c.target);
  if (key == "fail-on") return set_string(c.fail_on);
  if (key == "format") return set_string(c.format);
  if (key == "optimizer") return set_string(c.optimizer);
  if (key == "precision") return set_string(c.precision);
  if (key == "select") return set_strings(c.select);
  if (key == "ignore") return set_strings(c.ignore);
  if (key == "train") {
    auto v = node.value<bool>();
    if (!v || !node.is_boolean()) return MakeError(where + ": expected true or false");
    c.train = *v;
    return Ok{};
  }
  if (key == "batch") {
    auto v = node.value<std::int64_t>();
    if (!v || !node.is_integer() || *v < 1)
      return MakeError(where + ": expected a positive integer");
    c.batch = *v;
    return Ok{};
  }
  return MakeError(where +
                   ": unknown setting (known: target, select, ignore, fail-on, format, "
                   "train, optimizer, precision, batch)");
}

}  // namespace

Result<ProjectConfig> ParseProjectConfig(const std::string& text, const std::string& file) {
  ProjectConfig config;
  config.path = file;
  toml::table doc;
  try {
    doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return MakeError(file + ":" + std::to_string(e.source().begin.line) +
                     ": not valid TOML: " + std::string(e.description()));
  }
  const toml::node* section = doc.at_path("tool.tpu-doctor").node();
  if (section == nullptr) return config;
  const toml::table* table = section->as_table();
  if (table == nullptr) return MakeError(file + ": [tool.tpu-doctor] must be a table");
  for (const auto& [key, node] : *table) {
    const std::string name(key.str());
    auto applied = Apply(name, node, file + ": [tool.tpu-doctor] `" + name + "`", config);
    if (!applied) return applied.error();
  }
  return config;
}

Result<ProjectConfig> LoadProjectConfig(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::path start = std::filesystem::absolute(dir, ec);
  if (ec) return ProjectConfig{};
  for (std::filesystem::path d = start; !d.empty(); d = d.parent_path()) {
    const std::filesystem::path file = d / "pyproject.toml";
    if (std::filesystem::is_regular_file(file, ec)) {
      if (std::filesystem::file_size(file, ec) > kMaxConfigBytes)
        return MakeError(file.string() + ": larger than a pyproject.toml can be");
      std::ifstream in(file, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      return ParseProjectConfig(ss.str(), "pyproject.toml");
    }
    if (d == d.parent_path()) break;
  }
  return ProjectConfig{};
}

}  // namespace tpudoctor::cli
