#include "jobmon/common/proc_stat.h"

#include "jobmon/common/whole_number.h"

namespace jobmon {
namespace {

// Returns the n-th (0-based) space-separated field after the comm's ')'.
std::optional<std::string_view> FieldAfterComm(std::string_view text, int n) {
  size_t close = text.rfind(')');
  if (close == text.npos || close + 2 > text.size()) return std::nullopt;
  std::string_view rest = text.substr(close + 2);
  for (int i = 0; i < n; ++i) {
    size_t space = rest.find(' ');
    if (space == rest.npos) return std::nullopt;
    rest.remove_prefix(space + 1);
  }
  size_t end = rest.find_first_of(" \n");
  std::string_view field = rest.substr(0, end);
  if (field.empty()) return std::nullopt;
  return field;
}

template <typename T>
std::optional<T> NumberField(std::string_view text, int n) {
  auto field = FieldAfterComm(text, n);
  if (!field) return std::nullopt;
  return WholeNumber<T>(*field);
}

// Indices after ')': 0 state, 1 ppid, 3 session, 19 starttime.
constexpr int kStateIndex = 0;
constexpr int kPpidIndex = 1;
constexpr int kSessionIndex = 3;
constexpr int kStartTimeIndex = 19;

}  // namespace

std::optional<uint64_t> ParseProcStatStartTime(std::string_view text) {
  return NumberField<uint64_t>(text, kStartTimeIndex);
}

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  size_t open = text.find(" (");
  size_t close = text.rfind(')');
  if (open == text.npos || close == text.npos || close < open) return std::nullopt;
  ProcStat stat;
  const std::optional<pid_t> pid = WholeNumber<pid_t>(text.substr(0, open));
  if (!pid) return std::nullopt;
  stat.pid = *pid;
  stat.comm = std::string(text.substr(open + 2, close - open - 2));
  auto state = FieldAfterComm(text, kStateIndex);
  auto ppid = NumberField<pid_t>(text, kPpidIndex);
  auto session = NumberField<pid_t>(text, kSessionIndex);
  auto start = ParseProcStatStartTime(text);
  if (!state || state->size() != 1 || !ppid || !session || !start) return std::nullopt;
  stat.state = (*state)[0];
  stat.ppid = *ppid;
  stat.session = *session;
  stat.start_time = *start;
  return stat;
}

}  // namespace jobmon
