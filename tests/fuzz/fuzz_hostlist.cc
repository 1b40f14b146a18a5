// Hostlists come from the environment (SLURM_NODELIST) and from logs.
// Property: whatever expands, compresses to an expression that expands to
// the same set of hosts.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "jobmon/common/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string expression(reinterpret_cast<const char*>(data), size);
  auto hosts = jobmon::ExpandHostlist(expression);
  if (!hosts || hosts->size() > 10000) return 0;
  std::string compressed = jobmon::CompressHostlist(*hosts);
  if (compressed.empty()) return 0;  // only empty names, which compression drops
  auto again = jobmon::ExpandHostlist(compressed);
  std::set<std::string> a;
  for (const auto& h : *hosts) {
    if (!h.empty()) a.insert(h);
  }
  if (!again || std::set<std::string>(again->begin(), again->end()) != a) __builtin_trap();
  return 0;
}
