// torch.export writes symbolic sizes as sympy expressions: `s77`, `2*s77`, `FloorDiv(s0, 2)`,
// `Symbol('s77', positive=True, integer=True)`, unbacked `u0`. SymDim turns one into an IR Dim:
// static when every symbol has a value (from --dim/--batch), a named symbol when it is one
// symbol, and a symbol named by the cleaned expression otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "tpudoctor/ir/shape.h"

namespace tpudoctor::torch_export {

struct SymDim {
  Dim dim;
  std::set<std::string> symbols;  // every symbol the expression mentions
};

SymDim ParseSymDim(std::string_view expr, const std::map<std::string, std::int64_t>& values);

}  // namespace tpudoctor::torch_export
