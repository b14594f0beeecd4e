// The parsed form of an HLO text module, before it becomes IR. Private to src/frontends/hlo.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor::hlo {

struct HloShape {
  bool is_tuple = false;
  bool is_token = false;
  std::vector<HloShape> elements;  // tuple elements
  DType dtype = DType::kUnknown;
  std::vector<Dim> dims;
  // Per dim: `<=N` (bounded, dims[i] = N) or `?` (dims[i] unknown); empty when no dim is dynamic.
  std::vector<bool> dynamic;
};

struct HloAttr {
  std::string name;
  std::string value;  // raw text, balanced
};

struct HloInstr {
  std::string name;
  HloShape shape;
  std::string opcode;
  std::vector<std::string> operands;  // operand names (without `%`); literal text for constants
  std::vector<HloAttr> attrs;
  bool root = false;
  int line = 0;
  int column = 0;

  const HloAttr* Attr(std::string_view attr_name) const;
};

struct HloComputation {
  std::string name;
  bool entry = false;
  std::vector<HloInstr> instrs;
  int line = 0;
};

struct HloModule {
  std::string name;
  std::vector<HloComputation> computations;
  // Source positions from the FileNames/FileLocations/StackFrames tables of optimized dumps.
  std::map<long, SourceLoc> stack_frames;
  int modules_in_file = 1;
  std::int64_t partitions = 1;  // `num_partitions=N` of the module header
};

// `f32`, `bf16`, `pred`, `s64`, ... → DType (kUnknown for types the IR has no dtype for);
// nullopt when the name is not an HLO element type.
std::optional<DType> HloDType(std::string_view t);

// The IR graph of the module's entry computation (the last one when none is marked ENTRY).
Result<Graph> BuildHloGraph(const HloModule& module);

// `file:12:3: message` for a positioned message, `file: message` otherwise.
std::string AtFile(const std::string& file, const std::string& message);

// Parses HLO text (one module; further `// -----`-separated modules are counted, not read).
// Errors carry `line:col`.
Result<HloModule> ParseHloText(std::string_view text);

}  // namespace tpudoctor::hlo
