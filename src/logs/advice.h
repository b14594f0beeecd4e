// Turns extracted fields into specific advice: HBM used vs capacity → which TPU generation and
// how much to cut the per-core batch; XLA/TF dtype codes → names; op names → op-specific fixes.
// Private to src/logs.
#pragma once

#include "src/logs/knowledge_base.h"

namespace tpudoctor::logs {

// Parses XLA's human-readable sizes ("21.90G", "224.00M", "256.00MiB", "1.5GB", "0B") into bytes,
// with binary units as XLA prints them.
std::optional<double> ParseByteSize(std::string_view text);

// Adds derived fields to cause.extracted and refines cause.fix, by the signature's advice kind.
void ApplyAdvice(const Signature& signature, const KnowledgeBase& kb, LogCause& cause);

}  // namespace tpudoctor::logs
