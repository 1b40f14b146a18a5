#pragma once
// Slurm hostlist expressions: "node[01-04,7],gpu-a[1-2]".

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon {

// Upper bound on the hosts one expression may expand to, so that a typo such
// as "node[1-999999999]" is an error instead of an allocation storm.
inline constexpr size_t kMaxHostlistHosts = 1'000'000;

// Expands a hostlist expression into host names, in order. Each bracketed
// range keeps the zero padding of its lower bound ("[08-11]" -> 08 09 10 11);
// several bracket groups in one name expand as a cartesian product. The
// grammar is Slurm's (checked against scontrol in tests): no text after the
// last bracket group. Errors name the offending part: unbalanced or nested
// brackets, a suffix, empty names or ranges, reversed ranges, non-numeric
// bounds, more than kMaxHostlistHosts.
Expected<std::vector<std::string>> ExpandHostlist(std::string_view expression);

// Compresses host names into a hostlist expression: duplicates dropped,
// names grouped by the prefix before their numeric suffix (groups in order
// of first appearance, numbers ascending), consecutive numbers merged into
// ranges. ExpandHostlist(CompressHostlist(h)) yields the sorted unique h.
std::string CompressHostlist(const std::vector<std::string>& hosts);

}  // namespace jobmon
