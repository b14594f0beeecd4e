#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/ir/text.h"

namespace tpudoctor::cli {

int DumpIrCommand(const ModelArgs& args, std::ostream& out, std::ostream& err) {
  auto model = LoadModelArg(args, err);
  if (!model) return kExitUsage;
  out << PrintGraphText(model->graph);
  return kExitOk;
}

}  // namespace tpudoctor::cli
