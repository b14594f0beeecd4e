// The parsed form of an HLO text module, before it becomes IR. Private to src/frontends/hlo (and
// the StableHLO converter, which writes this form too). Names and attribute text are views into the
// parsed text, or into the module's own storage (`Keep`): the text must outlive the module.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
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
  std::string_view name;
  std::string_view value;  // raw text, balanced
};

struct HloInstr {
  std::string_view name;
  HloShape shape;
  std::string_view opcode;
  std::vector<std::string_view> operands;  // names (without `%`); literal text for constants
  std::vector<HloAttr> attrs;
  bool root = false;
  // False for an instruction written without a shape (`ROOT r = add(a, b)`, a nested operand, a
  // `t#0` tuple element): InferMissingShapes fills `shape` from the operands, as XLA does.
  bool shape_given = true;
  int line = 0;
  int column = 0;

  const HloAttr* Attr(std::string_view attr_name) const;
};

struct HloComputation {
  std::string_view name;
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

  // Keeps text that is not in the parsed source (CRLF-normalized text, operand lists without their
  // comments, names the StableHLO converter makes up) and returns a view of it.
  std::string_view Keep(std::string text) {
    owned.push_back(std::make_unique<std::string>(std::move(text)));
    return *owned.back();
  }
  std::vector<std::unique_ptr<std::string>> owned;  // heap strings: views survive moving the module
};

// `f32`, `bf16`, `pred`, `s64`, ... → DType (kUnknown for types the IR has no dtype for);
// nullopt when the name is not an HLO element type.
std::optional<DType> HloDType(std::string_view t);

// The IR graph of the module's entry computation (the last one when none is marked ENTRY).
Result<Graph> BuildHloGraph(const HloModule& module);

// `file:12:3: message` for a positioned message, `file: message` otherwise.
std::string AtFile(const std::string& file, const std::string& message);

// The framework an XLA module's name says lowered it: `jit_step`/`pjit_f` (JAX), `SyncTensorsGraph`
// (PyTorch/XLA), `a_inference_`/`cluster_` (TensorFlow), unknown otherwise.
Framework FrameworkOfModuleName(std::string_view module_name);

// Whether an attribute's value names a computation (or a list of them) the instruction calls:
// XLA's computation-valued attributes (`to_apply`, `calls`, `body`, `branch_computations`, ...).
bool CallsComputations(std::string_view attr_name);

// The one-line message for an HloModuleProto in protobuf text format; empty for other text.
std::string ProtoTextForm(std::string_view text);

// Parses HLO text (one module; further `// -----`-separated modules are counted, not read), then
// infers the shapes of instructions written without one. Errors carry `line:col`.
Result<HloModule> ParseHloText(std::string_view text);

// Fills the shape of every instruction written without one from its operands (and attributes,
// and called computations) the way XLA's ShapeInference does for the opcodes its parser lets omit
// a shape. Fails, naming the instruction, for one whose shape cannot be inferred.
Result<Ok> InferMissingShapes(HloModule& module);

}  // namespace tpudoctor::hlo
