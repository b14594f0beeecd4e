// The parsed form of a StableHLO/MHLO module in MLIR text, pretty or generic op syntax. Private
// to src/frontends/stablehlo. The parser knows MLIR's lexical structure (SSA names, balanced
// brackets, regions, block arguments, trailing `loc(...)`), not every op's custom syntax: an op
// keeps its own text, from which the converter reads the attributes it needs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor::mlir {

struct MlirRegion;

struct MlirOp {
  std::vector<std::string> results;   // expanded: `%0:2` gives "0#0", "0#1"
  std::string name;                   // "stablehlo.add", "func.call", "stablehlo.return"
  std::vector<std::string> operands;  // `%x` uses in order (without `%`); `%0#1` kept as is
  // `%iterArg = %arg0` definitions of the pretty while form: they name the regions' arguments.
  std::vector<std::string> defined_args;
  std::string callee;  // `@name` of call / custom_call
  std::string text;    // the op's own text after its name, regions and `loc(...)` left out
  std::vector<std::string> result_types;  // raw MLIR types, one per result
  std::string loc;                        // the `loc(...)` body, when present
  std::vector<MlirRegion> regions;
  int line = 0;
  int column = 0;
};

struct MlirRegion {
  std::vector<std::pair<std::string, std::string>> args;  // block arguments: name, raw type
  std::vector<MlirOp> ops;
};

struct MlirFunc {
  std::string name;
  bool is_public = false;
  bool has_body = false;
  std::vector<std::string> result_types;
  MlirRegion body;  // args are the function's parameters
  int line = 0;     // of the parameter list's `(`
  int column = 0;
};

struct MlirModule {
  std::string name;  // `module @jit_step` → "jit_step" (the outermost named module)
  std::vector<MlirFunc> funcs;
  std::map<std::string, std::string> loc_aliases;  // "#loc3" → the body of its `loc(...)`
  int modules_in_file = 1;
  // From `mhlo.num_partitions = N` or the largest `sdy.mesh` (product of its axis sizes).
  std::int64_t partitions = 1;
};

// Parses MLIR text (the first `// -----`-separated part). Errors carry `line:col`.
Result<MlirModule> ParseMlirText(std::string_view text);

// The symbol after `key` (`callee = @` → the name after it); nullopt when `key` is absent.
std::optional<std::string> SymbolAfter(std::string_view text, std::string_view key);

// Splits `a, b, c` at commas outside brackets, trimming each part.
std::vector<std::string> SplitTopLevel(std::string_view text, char sep = ',');

}  // namespace tpudoctor::mlir
