#include "cli.h"
#include "commands.h"
#include "tpudoctor/report/render.h"

namespace tpudoctor::cli {

int TargetsCommand(const std::string& format, std::ostream& out, std::ostream&) {
  out << (format == "json" ? RenderTargetsJson() : RenderTargetsText());
  return kExitOk;
}

}  // namespace tpudoctor::cli
