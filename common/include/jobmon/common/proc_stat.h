#pragma once
// /proc/<pid>/stat, parsed as the kernel documents it (proc(5)): the comm
// field is in parentheses and may itself contain spaces and ')', so fields
// are counted from the last ')'.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jobmon {

struct ProcStat {
  pid_t pid = 0;
  std::string comm;
  char state = '?';  // R, S, D, Z, ...
  pid_t ppid = 0;
  pid_t session = 0;
  uint64_t start_time = 0;  // field 22: clock ticks after boot
};

std::optional<ProcStat> ParseProcStat(std::string_view text);

// Field 22 alone, without allocating: safe between fork() and exec().
std::optional<uint64_t> ParseProcStatStartTime(std::string_view text);

}  // namespace jobmon
