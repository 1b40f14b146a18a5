// /proc/PID/stat and wchan to bounded labels; the cap on what is reported.
#include "jobmon/exporter/process_wait.h"

#include <algorithm>
#include <charconv>

#include "jobmon/common/ascii.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::exporter {

namespace {

bool IsSymbolChar(char c) {
  return IsAsciiLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

}  // namespace

std::optional<PidStat> ParsePidStat(std::string_view text) {
  size_t open = text.find(" (");
  size_t close = text.rfind(')');
  if (open == text.npos || close == text.npos || close < open + 2) return std::nullopt;
  PidStat stat;
  auto pid = WholeNumber<unsigned>(text.substr(0, open));
  if (!pid) return std::nullopt;
  stat.pid = *pid;
  stat.comm = std::string(text.substr(open + 2, close - open - 2));
  // After the comm: " S ppid pgrp ...": field 3 onwards, one space apart.
  std::string_view rest = text.substr(close + 1);
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  std::vector<std::string_view> fields;
  while (!rest.empty()) {
    if (rest.front() != ' ') return std::nullopt;
    rest.remove_prefix(1);
    size_t end = rest.find(' ');
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end == rest.npos ? rest.size() : end);
  }
  constexpr size_t kThreads = 20 - 3;  // num_threads is field 20, state field 3
  if (fields.size() <= kThreads || fields[0].size() != 1 || !IsAsciiLetter(fields[0][0])) {
    return std::nullopt;
  }
  stat.state = fields[0][0];
  auto ppid = WholeNumber<unsigned>(fields[1]);
  if (!ppid) return std::nullopt;
  stat.ppid = *ppid;
  auto threads = WholeNumber<unsigned>(fields[kThreads]);
  if (!threads) return std::nullopt;
  stat.threads = *threads;
  return stat;
}

std::string WchanLabel(std::string_view wchan, char state) {
  if (!wchan.empty() && wchan.back() == '\n') wchan.remove_suffix(1);
  if (wchan.empty() || wchan == "0") return state == 'R' ? "running" : "none";
  if (!std::all_of(wchan.begin(), wchan.end(), IsSymbolChar)) return "invalid";
  return std::string(wchan.substr(0, kWchanLabelMax));
}

std::string CommLabel(std::string_view comm) {
  std::string label(comm.substr(0, kCommLabelMax));
  for (char& c : label) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return label;
}

std::vector<PidStat> Busiest(std::vector<PidStat> processes, size_t cap) {
  if (processes.size() > cap) {
    std::nth_element(processes.begin(), processes.begin() + static_cast<std::ptrdiff_t>(cap),
                     processes.end(), [](const PidStat& a, const PidStat& b) {
                       return a.threads != b.threads ? a.threads > b.threads : a.pid < b.pid;
                     });
    processes.resize(cap);
  }
  std::sort(processes.begin(), processes.end(),
            [](const PidStat& a, const PidStat& b) { return a.pid < b.pid; });
  return processes;
}

std::vector<std::pair<std::string, unsigned>> LargestCounts(
    const std::map<std::string, unsigned>& counts, size_t keep) {
  std::vector<std::pair<std::string, unsigned>> sorted(counts.begin(), counts.end());
  if (sorted.size() > keep) {
    // Stable: equal counts keep the map's value order.
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    unsigned other = 0;
    for (size_t i = keep; i < sorted.size(); ++i) other += sorted[i].second;
    sorted.resize(keep);
    bool merged = false;
    for (auto& [value, count] : sorted) {
      if (value == "other") count += other, merged = true;
    }
    if (!merged) sorted.emplace_back("other", other);
    std::sort(sorted.begin(), sorted.end());
  }
  return sorted;
}

}  // namespace jobmon::exporter
