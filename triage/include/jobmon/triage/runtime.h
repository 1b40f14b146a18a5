#pragma once
// Which framework and launcher a log shows, by the names their own lines
// and traceback frames carry: next steps name the job's tools, not another
// framework's (docs/triage.md, "Next steps").

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

enum class Runtime : uint8_t {
  kPyTorch,
  kTorchrun,
  kTorchSpawn,
  kSrun,
  kJax,
  kMaxText,
  kDeepSpeed,
  kLightning,
  kHuggingFace,
  kMegatron,
  kRay,
};
inline constexpr size_t kRuntimeCount = 11;

// One bit per Runtime.
using RuntimeSet = uint32_t;
constexpr RuntimeSet Bit(Runtime r) { return RuntimeSet{1} << static_cast<unsigned>(r); }
constexpr bool Has(RuntimeSet set, Runtime r) { return (set & Bit(r)) != 0; }

std::string_view ToString(Runtime runtime);
std::vector<std::string> Names(RuntimeSet set);

// The runtimes a line names; 0 for most lines.
RuntimeSet RuntimesNamedBy(std::string_view line);

// The prefilter's expression for lines that may name one (Hyperscan
// syntax, case-sensitive): RuntimesNamedBy decides.
extern const char* const kRuntimeMarkExpression;

// A PyTorch job (torch or a framework on it), a JAX one, or neither seen.
enum class Ecosystem { kUnknown, kPyTorch, kJax };
Ecosystem EcosystemOf(RuntimeSet set);

}  // namespace jobmon::triage
