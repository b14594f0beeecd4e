#include "src/logs/advice.h"

#include <cctype>
#include <cmath>

#include "tpudoctor/support/strings.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor::logs {
namespace {

std::optional<std::string> Field(const LogCause& c, std::string_view name) {
  for (const auto& [k, v] : c.extracted) {
    if (k == name) return v;
  }
  return std::nullopt;
}

// The TPU generations whose per-device HBM matches a capacity XLA reported (usable HBM is a bit
// below the physical size).
std::vector<std::string> GenerationsFor(double capacity_bytes) {
  std::vector<std::string> out;
  for (const TargetSpec& t : AllTargets()) {
    if (!t.is_tpu() || !t.hbm_gib || t.devices_per_chip <= 0) continue;
    const double device = *t.hbm_gib / t.devices_per_chip * 1024.0 * 1024 * 1024;
    if (capacity_bytes <= device * 1.001 && capacity_bytes >= device * 0.85) {
      out.push_back(t.display_name + " (" + FormatFixed(*t.hbm_gib / t.devices_per_chip, 0) +
                    " GiB per device)");
    }
  }
  return out;
}

void HbmAdvice(LogCause& c) {
  auto used = Field(c, "used");
  auto capacity = Field(c, "capacity");
  if (!used || !capacity) return;
  auto u = ParseByteSize(*used);
  auto cap = ParseByteSize(*capacity);
  if (!u || !cap || *u <= 0 || *cap <= 0) return;
  auto gens = GenerationsFor(*cap);
  if (!gens.empty()) c.extracted.emplace_back("device", Join(gens, " or "));
  if (*u <= *cap) return;
  c.extracted.emplace_back("over_by", FormatGiB(*u - *cap));
  // Activations scale with the batch, weights and optimizer state do not: cutting the batch by
  // this factor is the upper bound of what a batch cut alone can achieve.
  const double scale = std::floor(*cap * 0.9 / *u * 100.0);
  c.extracted.emplace_back("batch_scale", FormatFixed(scale, 0) + "%");
  c.fix =
      "the program needs " + FormatGiB(*u) + " of HBM per device but " + FormatGiB(*cap) +
      " is available" + (gens.empty() ? "" : " (" + gens.front() + ")") +
      ": cut the per-device batch to at most " + FormatFixed(scale, 0) +
      "% of its current value (less if weights and optimizer state dominate), or shard parameters "
      "and optimizer state across devices (FSDP / ZeRO), rematerialize activations "
      "(jax.checkpoint, gradient checkpointing), keep weights and activations in bfloat16, or use "
      "a generation with more HBM per device. " +
      c.fix;
}

// xla_data.proto PrimitiveType numbers, as "Unsupported XLA type N" prints them.
std::string XlaTypeName(int code) {
  switch (code) {
    case 1:
      return "pred";
    case 2:
      return "s8";
    case 3:
      return "s16";
    case 4:
      return "s32";
    case 5:
      return "s64";
    case 6:
      return "u8";
    case 7:
      return "u16";
    case 8:
      return "u32";
    case 9:
      return "u64";
    case 10:
      return "f16";
    case 11:
      return "f32";
    case 12:
      return "f64";
    case 15:
      return "c64";
    case 16:
      return "bf16";
    case 18:
      return "c128";
    default:
      return "";
  }
}

void XlaTypeAdvice(LogCause& c) {
  auto code = Field(c, "type_code");
  if (!code) return;
  auto n = ParseInt64(*code);
  if (!n) return;
  const std::string name = XlaTypeName(static_cast<int>(*n));
  if (name.empty()) return;
  c.extracted.emplace_back("dtype", name);
  if (name == "f16") {
    c.fix =
        "XLA type 10 is float16, which the TPU does not compute natively: use bfloat16 (PyTorch: "
        "`torch.autocast('xla', dtype=torch.bfloat16)` or `XLA_USE_BF16=1` on old releases; "
        "Lightning: "
        "`precision='bf16'`). " +
        c.fix;
  } else if (name == "f64" || name == "s64" || name == "u64") {
    c.fix = "XLA type " + *code + " is " + name +
            ", a 64-bit type the TPU lacks: cast to 32 bits. " + c.fix;
  }
}

void TfDtypeAdvice(LogCause& c) {
  auto dt = Field(c, "tf_dtype");
  if (!dt) return;
  std::string name = *dt;
  if (name.rfind("DT_", 0) == 0) name = name.substr(3);
  name = AsciiLower(name);
  c.extracted.emplace_back("dtype", name);
  c.fix = "the op exists on TPU but not for " + name +
          ": cast its input to a supported type (int32 for "
          "indices, float32/bfloat16 for values) before the op. " +
          c.fix;
}

void OpAdvice(const KnowledgeBase& kb, LogCause& c) {
  auto ops = Field(c, "op");
  if (!ops) return;
  for (const auto& [op, fix] : kb.op_fixes()) {
    if (ops->find(op) != std::string::npos) {
      c.fix = "`" + op + "`: " + fix + " " + c.fix;
      return;
    }
  }
}

}  // namespace

std::optional<double> ParseByteSize(std::string_view text) {
  text = Trim(text);
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  auto number = ParseDouble(text.substr(0, i));
  if (!number) return std::nullopt;
  std::string_view unit = Trim(text.substr(i));
  double scale = 1;
  if (!unit.empty()) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'B':
        scale = 1;
        break;
      case 'K':
        scale = 1024.0;
        break;
      case 'M':
        scale = 1024.0 * 1024;
        break;
      case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        return std::nullopt;
    }
  }
  return *number * scale;
}

void ApplyAdvice(const Signature& signature, const KnowledgeBase& kb, LogCause& cause) {
  if (signature.advice == "hbm") HbmAdvice(cause);
  if (signature.advice == "xla_type") XlaTypeAdvice(cause);
  if (signature.advice == "tf_dtype") TfDtypeAdvice(cause);
  if (signature.advice == "op") OpAdvice(kb, cause);
}

}  // namespace tpudoctor::logs
