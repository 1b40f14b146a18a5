#pragma once
// The pure half of the job_processes collector: what /proc/PID/stat and
// /proc/PID/wchan say (proc(5)), made into bounded label values, and which
// processes and wait channels are reported. Reading: job_process_collector.h.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jobmon::exporter {

// /proc/PID/stat and /proc/PID/task/TID/stat: "pid (comm) state ppid ...".
// comm is whatever the process named itself (any byte but NUL: spaces, ')'
// and newlines included), so it ends at the last ')'.
struct PidStat {
  unsigned pid = 0;
  std::string comm;
  char state = 0;        // one ASCII letter: R, S, D, T, t, Z, X, I, ...
  unsigned threads = 0;  // field 20, num_threads
  unsigned ppid = 0;     // field 4 (0: none, or a parent outside the pid namespace)
};
std::optional<PidStat> ParsePidStat(std::string_view text);

inline constexpr size_t kWchanLabelMax = 64;
inline constexpr size_t kCommLabelMax = 32;

// The wchan label: the kernel symbol the task sleeps in ([A-Za-z0-9_.], at
// most kWchanLabelMax bytes); "0" or empty (no symbol: running, a zombie, or
// a task the reader may not see): "running" for state R, else "none"; any
// other text "invalid". At most one trailing newline is ignored.
std::string WchanLabel(std::string_view wchan, char state);

// The comm label: at most kCommLabelMax bytes of printable ASCII, anything
// else '?', so the value is always valid UTF-8.
std::string CommLabel(std::string_view comm);

// The processes reported: the `cap` with the most threads (ties: lower pid
// first), in pid order.
std::vector<PidStat> Busiest(std::vector<PidStat> processes, size_t cap);

// Counts per value, the `keep` largest (ties: value order), the rest summed
// under "other"; in value order.
std::vector<std::pair<std::string, unsigned>> LargestCounts(
    const std::map<std::string, unsigned>& counts, size_t keep);

}  // namespace jobmon::exporter
