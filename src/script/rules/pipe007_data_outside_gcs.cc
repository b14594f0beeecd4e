#include <cctype>
#include <set>
#include <string_view>

#include "src/script/rules/factories.h"
#include "tpudoctor/knowledge/storage.h"

namespace tpudoctor::script {
namespace {

// Calls whose first argument names the files a pipeline reads.
bool ReadsFiles(const std::string& name) {
  return name == "tensorflow.data.TFRecordDataset" || name == "tensorflow.data.TextLineDataset" ||
         name == "tensorflow.data.FixedLengthRecordDataset" ||
         name == "tensorflow.data.Dataset.list_files" || name == "tensorflow.io.gfile.glob" ||
         name == "tensorflow.data.experimental.make_csv_dataset" ||
         name == "tensorflow.data.experimental.CsvDataset";
}

// The string literals an argument spells: a string, a list or tuple of them, or a name bound to
// one of those.
std::vector<Node> Paths(const ScriptModel& model, Node arg) {
  arg = model.Resolve(arg);
  std::vector<Node> out;
  if (StringLiteral(arg)) out.push_back(arg);
  if (arg.is("list") || arg.is("tuple")) {
    for (std::uint32_t i = 0; i < arg.named_count(); ++i) {
      if (StringLiteral(arg.named(i))) out.push_back(arg.named(i));
    }
  }
  return out;
}

// Files or folders the script makes itself: string literals given to a writer or a download
// (`tf.io.TFRecordWriter(path)`, `open(path, "w")`, `tf.keras.utils.get_file(..., cache_subdir=)`,
// `df.to_csv(path)`, `np.save(path)`, ...) and a notebook's `%%writefile` cells. Every host that
// runs the script makes its own copy, so reading them locally is fine.
std::vector<std::string> MadeByScript(const ScriptModel& model) {
  std::vector<std::string> out = model.text().written_files;
  for (const Call& c : model.calls()) {
    const std::string& m = c.method;
    if (m != "TFRecordWriter" && m != "get_file" && m != "open" && m != "to_csv" && m != "save" &&
        m != "savetxt" && m != "write_file" && m != "urlretrieve" && m != "extractall" &&
        m != "copy" && m != "copyfile") {
      continue;
    }
    auto add = [&](Node a) {
      if (auto s = StringLiteral(model.Resolve(a))) out.push_back(*s);
    };
    for (Node a : c.args) add(a);
    for (const auto& [k, v] : c.kwargs) add(v);
  }
  return out;
}

// Whether a path is one of those, or inside one of those folders.
bool Made(std::string_view path, const std::vector<std::string>& made) {
  for (const std::string& m : made) {
    if (m.empty()) continue;
    if (path == m || (path.starts_with(m) && path.size() > m.size() && path[m.size()] == '/')) {
      return true;
    }
  }
  return false;
}

// Whether one of a notebook's shell commands names a local path or the folder it is in (`!python
// gen.py --output_dir=data/examples`, `!wget -P data URL`, `!unzip x.zip -d data/examples`): the
// notebook downloads or makes it, and every host that runs the notebook does too. The name must
// stand as a word of the command (not inside a longer path).
bool MadeByShell(std::string_view path, const std::vector<std::string>& commands) {
  if (path.starts_with("./")) path.remove_prefix(2);
  if (path.empty() || path.starts_with("/") || path.find("://") != std::string_view::npos)
    return false;
  const std::size_t slash = path.rfind('/');
  const std::string_view folder = slash == std::string_view::npos ? path : path.substr(0, slash);
  const auto bounded = [](std::string_view text, std::string_view name) {
    const auto part = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
             c == '/';
    };
    for (std::size_t at = text.find(name); at != std::string_view::npos;
         at = text.find(name, at + 1)) {
      std::size_t begin = at;
      if (begin >= 2 && text.substr(begin - 2, 2) == "./") begin -= 2;
      const bool left = begin == 0 || !part(text[begin - 1]);
      const std::size_t end = at + name.size();
      const bool right = end == text.size() || !part(text[end]) ||
                         (text[end] == '/' && (end + 1 == text.size() || !part(text[end + 1])));
      if (left && right) return true;
    }
    return false;
  };
  for (const std::string& command : commands) {
    if (bounded(command, path) || bounded(command, folder)) return true;
  }
  return false;
}

// A tf.data source reading literal paths outside Cloud Storage (the same judgement as the graph
// rule: knowledge/storage.h), unless the script makes those files itself.
class Pipe007 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PIPE007", "data-outside-cloud-storage",
                   "a tf.data pipeline reads files from the local disk or another cloud")
  void Run(const ScriptContext& c) const override {
    std::set<std::string> reported;
    const std::vector<std::string> made = MadeByScript(c.model);
    for (const Call& call : c.model.calls()) {
      if (!ReadsFiles(call.name) || call.args.empty()) continue;
      // One finding per call, at its first such path.
      Node first;
      std::string why;
      int more = 0;
      for (Node path : Paths(c.model, call.args[0])) {
        const std::string p = *StringLiteral(path);
        const std::string problem = DataLocationProblem(p);
        if (problem.empty() || Made(p, made) || MadeByShell(p, c.model.text().shell_commands) ||
            !reported.insert(p).second)
          continue;
        if (first) {
          ++more;
        } else {
          first = path;
          why = problem;
        }
      }
      if (!first) continue;
      Diagnostic d = c.Finding(
          code(), Severity::kWarning, first,
          "`" + std::string(call.callee.text()) + "` reads `" + *StringLiteral(first) + "`" +
              (more > 0 ? " (and " + std::to_string(more) + " more)" : "") + " from " + why);
      d.fix =
          Fix{"copy the data to a gs:// bucket in the TPU's region (`gcloud storage cp`) and "
              "read it from there",
              FixApplicability::kDisplayOnly};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePipe007DataOutsideGcs() { return std::make_unique<Pipe007>(); }

}  // namespace tpudoctor::script
