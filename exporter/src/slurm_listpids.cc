// `scontrol listpids` rows, and which Slurm task each process belongs to.
#include "jobmon/exporter/slurm_listpids.h"

#include <algorithm>
#include <array>
#include <utility>

#include "jobmon/common/text_lines.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::exporter {

namespace {

// The whitespace-separated words of a line (scontrol pads with spaces, and
// 25.11 ends each row with one).
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < line.size()) {
    at = line.find_first_not_of(" \t\r", at);
    if (at == line.npos) break;
    size_t end = line.find_first_of(" \t\r", at);
    if (end == line.npos) end = line.size();
    words.push_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

// "-" (no task: id stays empty) or a task id; false for anything else.
bool TaskId(std::string_view word, std::optional<unsigned>& id) {
  if (word == "-") return true;
  id = WholeNumber<unsigned>(word);
  return id.has_value();
}

bool Numbered(std::string_view step) { return !step.empty() && step[0] >= '0' && step[0] <= '9'; }

}  // namespace

Expected<std::vector<ListedPid>> ParseListPids(std::string_view text, std::string_view job_id) {
  static constexpr std::array<std::string_view, 5> kHeader = {"PID", "JOBID", "STEPID", "LOCALID",
                                                              "GLOBALID"};
  std::vector<ListedPid> rows;
  bool header = false;
  size_t number = 0;
  for (std::string_view line : TextLines(text)) {
    ++number;
    auto words = Words(line);
    if (words.empty()) continue;
    const std::string where = "line " + std::to_string(number);
    if (!header) {
      if (!std::equal(words.begin(), words.end(), kHeader.begin(), kHeader.end())) {
        return Error{where + ": not listpids' header (PID JOBID STEPID LOCALID GLOBALID)"};
      }
      header = true;
      continue;
    }
    if (words.size() != kHeader.size()) return Error{where + ": not 5 columns"};
    auto pid = WholeNumber<long>(words[0]);
    auto job = WholeNumber<unsigned>(words[1]);
    ListedPid row;
    if (!pid || !job || !TaskId(words[3], row.local_task) || !TaskId(words[4], row.global_task)) {
      return Error{where + ": not a pid, job id and task ids"};
    }
    if (*pid <= 0 || words[1] != job_id) continue;
    row.pid = static_cast<unsigned>(*pid);
    row.step = std::string(words[2]);
    rows.push_back(std::move(row));
  }
  if (!header) return Error{"no output"};
  return rows;
}

std::map<unsigned, unsigned> TaskPids(const std::vector<ListedPid>& rows) {
  std::map<unsigned, unsigned> tasks;
  for (const ListedPid& row : rows) {
    if (row.global_task && Numbered(row.step)) tasks.emplace(row.pid, *row.global_task);
  }
  return tasks;
}

std::map<unsigned, unsigned> TasksOf(const std::vector<PidStat>& processes,
                                     const std::map<unsigned, unsigned>& task_pids,
                                     size_t max_depth) {
  std::map<unsigned, unsigned> parent;
  for (const PidStat& p : processes) parent.emplace(p.pid, p.ppid);
  std::map<unsigned, unsigned> tasks;
  for (const PidStat& p : processes) {
    unsigned at = p.pid;
    for (size_t up = 0; up <= max_depth; ++up) {
      if (auto task = task_pids.find(at); task != task_pids.end()) {
        tasks.emplace(p.pid, task->second);
        break;
      }
      auto next = parent.find(at);
      if (next == parent.end() || next->second == at) break;
      at = next->second;
    }
  }
  return tasks;
}

}  // namespace jobmon::exporter
