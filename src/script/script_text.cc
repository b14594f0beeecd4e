#include "src/script/script_text.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "src/support/json_input.h"
#include "tpudoctor/script/script.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::script {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Whether `bytes` is UTF-8 text: no NUL, no malformed sequence.
bool IsUtf8Text(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == 0) return false;
    int extra = c < 0x80           ? 0
                : (c >> 5) == 0x6  ? 1
                : (c >> 4) == 0xE  ? 2
                : (c >> 3) == 0x1E ? 3
                                   : -1;
    if (extra < 0 || i + extra >= bytes.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80) return false;
    }
    i += extra + 1;
  }
  return true;
}

// Replaces every character of [begin, end) but newlines with a space.
void Blank(std::string& code, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end && i < code.size(); ++i) {
    if (code[i] != '\n') code[i] = ' ';
  }
}

// Whether a line is IPython's `names = !command` or `names = %magic`: names (identifiers, dots,
// commas, spaces), `=`, then `!` or `%` (IPython's assign_from_system / assign_from_magic).
bool AssignsFromShell(std::string_view line) {
  const std::size_t eq = line.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  for (char c : line.substr(0, eq)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ',' ||
          c == ' ' || c == '\t')) {
      return false;
    }
  }
  const std::size_t rhs = line.find_first_not_of(" \t", eq + 1);
  return rhs != std::string_view::npos && (line[rhs] == '!' || line[rhs] == '%') &&
         line.substr(eq, 2) != "==" && (rhs + 1 >= line.size() || line[rhs + 1] != '=');
}

// Where Python's logical lines start, fed line by line: open brackets, an open triple-quoted
// string or a trailing backslash continue the statement on the next line.
class LogicalLines {
 public:
  bool AtStatementStart() const { return depth_ == 0 && quote_ == 0 && !backslash_; }

  void Feed(std::string_view line) {
    backslash_ = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quote_ != 0) {
        if (c == '\\') {
          ++i;
        } else if (TripleAt(line, i, quote_)) {
          quote_ = 0;
          i += 2;
        } else if (!triple_ && c == quote_) {
          quote_ = 0;
        }
        continue;
      }
      if (c == '#') break;
      if (c == '"' || c == '\'') {
        triple_ = TripleAt(line, i, c);
        quote_ = c;
        if (triple_) i += 2;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth_;
      } else if ((c == ')' || c == ']' || c == '}') && depth_ > 0) {
        --depth_;
      }
    }
    if (quote_ != 0 && !triple_) quote_ = 0;  // an unterminated one-line string ends here
    const std::size_t end = line.find_last_not_of(" \t\r");
    backslash_ = end != std::string_view::npos && line[end] == '\\' && quote_ == 0;
  }

 private:
  static bool TripleAt(std::string_view line, std::size_t i, char q) {
    return i + 2 < line.size() && line[i] == q && line[i + 1] == q && line[i + 2] == q;
  }
  int depth_ = 0;
  char quote_ = 0;  // the open string's quote, 0 outside strings
  bool triple_ = false;
  bool backslash_ = false;
};

// Whether an IPython line runs a shell command: `!cmd`, or `files = !cmd`.
bool IsShellEscape(std::string_view line) {
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) return false;
  if (line[start] == '!') return true;
  // AssignsFromShell found `=` and then `!` or `%` as the first thing after it.
  return AssignsFromShell(line) && line[line.find_first_not_of(" \t", line.find('=') + 1)] == '!';
}

// Whether a line calls a line magic without its `%`, as IPython's automagic (on by default) lets
// a notebook do: `pip install transformers`, `cd /content/repo`, `load_ext tensorboard`. In
// Python a name followed by a word, a path or a number is a syntax error, so only such lines are
// taken: `cd = 3` or `env.step(a)` stay Python.
bool IsAutomagic(std::string_view text, std::size_t start) {
  static constexpr std::string_view kMagics[] = {"cd",       "conda",      "env",
                                                 "load_ext", "matplotlib", "pip"};
  for (std::string_view magic : kMagics) {
    if (text.substr(start, magic.size()) != magic) continue;
    const std::size_t after = start + magic.size();
    if (after >= text.size() || (text[after] != ' ' && text[after] != '\t')) continue;
    const std::size_t next = text.find_first_not_of(" \t", after);
    if (next == std::string_view::npos) continue;
    const char c = text[next];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '~' || c == '.')
      return true;
  }
  return false;
}

// Whether a line, at the start of a statement, is IPython syntax rather than Python.
bool IsIPythonLine(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return false;
  const char c = text[start];
  if (c == '%' || c == '!' || c == '?') return true;
  if (IsAutomagic(text, start)) return true;
  // `obj?` / `obj??`: help. Python has no `?`, so a line ending with one (outside a comment) is
  // not Python — unless the `?` is inside a string or brackets the line leaves open (`PROMPT =
  // """Q: how many trees?` goes on over the next lines), which IPython's tokens see as Python.
  const std::size_t end = text.find_last_not_of(" \t\r");
  if (text[end] == '?' && text.find('#') == std::string_view::npos) {
    LogicalLines probe;
    probe.Feed(text);
    return probe.AtStatementStart();
  }
  return AssignsFromShell(text);
}

// Whether a line at column 0 starts a statement that may open a chunk: a def, a class, a
// decorator or an import (never `else:`/`except:`, which continue the statement before them).
bool OpensTopLevelStatement(std::string_view line) {
  for (std::string_view keyword : {"def ", "async def ", "class ", "@", "import ", "from "}) {
    if (line.starts_with(keyword)) return true;
  }
  return false;
}

// Blanks IPython's own syntax in a cell: a cell magic (`%%bash`) makes the whole cell another
// language; a line magic (`%matplotlib inline`), a shell escape (`!pip install`) or a help query
// (`?name`) or an assignment from one (`files = !ls`) is one line that is not Python.
void BlankIPythonSyntax(std::string& code, std::size_t begin, ScriptText& text_out) {
  std::size_t first = code.find_first_not_of(" \t\r\n", begin);
  if (first != std::string::npos && code.compare(first, 2, "%%") == 0) {
    // `%%writefile [-a] NAME`: the cell is a file the notebook writes.
    const std::size_t eol = std::min(code.find('\n', first), code.size());
    std::vector<std::string_view> words;
    for (std::string_view w : Split(std::string_view(code).substr(first, eol - first), ' ')) {
      if (!w.empty()) words.push_back(w);
    }
    if (!words.empty() && words[0] == "%%writefile" && words.size() >= 2) {
      text_out.written_files.emplace_back(words.back());
    }
    if (!words.empty() && (words[0] == "%%bash" || words[0] == "%%sh" || words[0] == "%%shell")) {
      text_out.shell_commands.push_back(code.substr(eol));
    }
    Blank(code, begin, code.size());
    return;
  }
  LogicalLines lines;
  std::size_t line = begin;
  while (line < code.size()) {
    std::size_t eol = code.find('\n', line);
    if (eol == std::string::npos) eol = code.size();
    const std::string_view text = std::string_view(code).substr(line, eol - line);
    // IPython reads `%magic`, `!shell`, `?help`, `name?` and `x = !cmd` only where a statement
    // starts: not inside brackets, a string or a backslash continuation (`%(a, b)` there is
    // Python's string formatting).
    if (lines.AtStatementStart() && IsIPythonLine(text)) {
      // A shell command or magic goes on over lines that end with a backslash.
      while (eol > line && eol < code.size() && code[eol - 1] == '\\') {
        const std::size_t next = code.find('\n', eol + 1);
        eol = next == std::string::npos ? code.size() : next;
      }
      if (IsShellEscape(text)) text_out.shell_commands.push_back(code.substr(line, eol - line));
      Blank(code, line, eol);
    } else {
      lines.Feed(text);
    }
    line = eol + 1;
  }
}

std::string CellSource(const nlohmann::json& source) {
  if (source.is_string()) return source.get<std::string>();
  std::string out;
  if (source.is_array()) {
    for (const auto& line : source) {
      if (line.is_string()) out += line.get<std::string>();
    }
  }
  return out;
}

Result<ScriptText> ReadNotebook(const Source& source) {
  if (source.bytes.size() > kMaxNotebookBytes) {
    return MakeError(source.display_name + ": a notebook larger than " +
                     std::to_string(kMaxNotebookBytes >> 20) + " MiB");
  }
  auto parsed = ParseJsonInput(source.bytes, source.display_name);
  if (!parsed) return parsed.error();
  const nlohmann::json& nb = *parsed;
  if (!nb.is_object() || !nb.contains("cells") || !nb["cells"].is_array()) {
    return MakeError(source.display_name +
                     ": not a Jupyter notebook (expected nbformat JSON with a `cells` list)");
  }
  ScriptText text;
  text.notebook = true;
  int number = 0;
  std::uint32_t row = 0;
  for (const auto& cell : nb["cells"]) {
    ++number;
    if (!cell.is_object() || cell.value("cell_type", "") != "code" || !cell.contains("source")) {
      continue;
    }
    Cell c;
    c.number = number;
    c.source = CellSource(cell["source"]);
    if (!IsUtf8Text(c.source)) {
      return MakeError(source.display_name + ": cell " + std::to_string(number) +
                       " is not UTF-8 text");
    }
    c.begin = static_cast<std::uint32_t>(text.code.size());
    c.first_row = row;
    text.code += c.source;
    BlankIPythonSyntax(text.code, c.begin, text);
    text.code += '\n';
    row += static_cast<std::uint32_t>(std::count(c.source.begin(), c.source.end(), '\n')) + 1;
    if (text.code.size() > kMaxScriptBytes) {
      return MakeError(source.display_name + ": more than " +
                       std::to_string(kMaxScriptBytes >> 20) + " MiB of code");
    }
    text.cells.push_back(std::move(c));
  }
  text.IndexLines();
  return text;
}

}  // namespace

}  // namespace tpudoctor::script

namespace tpudoctor {

bool IsScriptPath(std::string_view path) {
  const std::string lower = AsciiLower(path);
  return script::EndsWith(lower, ".py") || script::EndsWith(lower, ".pyw") ||
         script::EndsWith(lower, ".ipynb");
}

}  // namespace tpudoctor

namespace tpudoctor::script {

Result<ScriptText> ReadScript(const Source& source) {
  if (EndsWith(AsciiLower(source.display_name), ".ipynb")) return ReadNotebook(source);
  if (source.bytes.size() > kMaxScriptBytes) {
    return MakeError(source.display_name + ": a Python file larger than " +
                     std::to_string(kMaxScriptBytes >> 20) + " MiB is not a training script");
  }
  if (!IsUtf8Text(source.bytes)) {
    return MakeError(source.display_name + ": not Python source (binary or not UTF-8 text)");
  }
  ScriptText text;
  text.code = source.bytes;
  text.IndexLines();
  return text;
}

int ScriptText::CellIndexOf(std::uint32_t offset) const {
  if (cells.empty()) return -1;
  auto it = std::upper_bound(cells.begin(), cells.end(), offset,
                             [](std::uint32_t o, const Cell& c) { return o < c.begin; });
  return it == cells.begin() ? 0 : static_cast<int>(it - cells.begin()) - 1;
}

void ScriptText::IndexLines() {
  line_starts_.assign(1, 0);
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '\n') line_starts_.push_back(static_cast<std::uint32_t>(i + 1));
  }
}

Position ScriptText::Locate(std::uint32_t offset) const {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(code.size()));
  if (line_starts_.empty()) return {};  // not indexed: ReadScript makes every ScriptText
  const auto after = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const int row = static_cast<int>(after - line_starts_.begin()) - 1;
  const std::size_t line_start = line_starts_[row];
  int column = 1;
  for (std::size_t i = line_start; i < offset; ++i) {
    column += (static_cast<unsigned char>(code[i]) & 0xC0) != 0x80;
  }
  Position p{0, row + 1, column};
  if (const int cell = CellIndexOf(offset); cell >= 0) {
    p.cell = cells[cell].number;
    p.line = row - static_cast<int>(cells[cell].first_row) + 1;
  }
  return p;
}

std::vector<std::uint32_t> TopLevelStatementStarts(std::string_view code) {
  std::vector<std::uint32_t> starts;
  LogicalLines lines;
  bool after_decorator = false;
  for (std::size_t line = 0; line < code.size() && line <= UINT32_MAX;) {
    std::size_t eol = code.find('\n', line);
    if (eol == std::string_view::npos) eol = code.size();
    const std::string_view text = code.substr(line, eol - line);
    if (lines.AtStatementStart() && OpensTopLevelStatement(text)) {
      // A decorator belongs with the def under it.
      if (!after_decorator) starts.push_back(static_cast<std::uint32_t>(line));
      after_decorator = text.starts_with("@");
    } else if (lines.AtStatementStart() && !text.empty() && text[0] != ' ' && text[0] != '\t' &&
               text[0] != '#' && text[0] != '\r') {
      after_decorator = false;
    }
    lines.Feed(text);
    line = eol + 1;
  }
  return starts;
}

}  // namespace tpudoctor::script
