// ScriptText: the Python code of a `.py` file or of a notebook's code cells, as the parser reads
// it, and the way back from a byte of it to what the user sees (cell, line, column).
//
// A notebook's code cells are joined in order, each starting on a new line, so that a name
// imported in the first cell is known in the last. IPython syntax that is not Python (`%magic`,
// `!shell`, `%%cell magic` cells) is blanked with spaces, keeping every offset, so an offset into
// `code` minus its cell's `begin` is an offset into that cell's source.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/frontend/source.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor::script {

struct Cell {
  int number = 0;           // 1-based, counting every cell of the notebook as Jupyter shows them
  std::uint32_t begin = 0;  // where its source starts in ScriptText::code
  std::uint32_t first_row = 0;  // its first line's row in ScriptText::code
  std::string source;           // the cell's own text, unblanked
};

struct Position {
  int cell = 0;    // 0 in a `.py` file
  int line = 0;    // 1-based, within the cell for a notebook
  int column = 0;  // 1-based, in characters
};

struct ScriptText {
  std::string code;
  bool notebook = false;
  std::vector<Cell> cells;  // a notebook's code cells, in order
  // Files a notebook's `%%writefile NAME` cells write (the cells themselves are blanked).
  std::vector<std::string> written_files;
  // A notebook's shell commands (`!cmd` lines, `%%bash` cells): they may download or make the
  // files the code reads (`!python gen.py --output_dir=data/examples`).
  std::vector<std::string> shell_commands;

  // Where `offset` is, through the index of lines that IndexLines makes (ReadScript does; an
  // unindexed text locates nothing: a zero Position).
  Position Locate(std::uint32_t offset) const;
  // The cell holding `offset` (index into `cells`), or -1 in a `.py` file.
  int CellIndexOf(std::uint32_t offset) const;
  // Indexes the lines of `code`, once it is complete.
  void IndexLines();

 private:
  std::vector<std::uint32_t> line_starts_;
};

// The largest script read: real training scripts are kilobytes; a notebook carries its outputs
// (images, logs), so it may be larger, but only its code is read.
inline constexpr std::size_t kMaxScriptBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxNotebookBytes = std::size_t{128} << 20;

// Reads a script or notebook. Errors (one line): binary or non-UTF-8 bytes, a file too large, a
// notebook that is not nbformat JSON.
Result<ScriptText> ReadScript(const Source& source);

// Offsets of lines where a top-level def, class, decorated def or import starts: outside any
// bracket, string or continuation, never between a decorator and its def. Where a large file may
// be cut into parts that parse on their own. A heuristic of lines: the parser checks the parts.
std::vector<std::uint32_t> TopLevelStatementStarts(std::string_view code);

}  // namespace tpudoctor::script
