// Each rank's node and wait, from the task labels of the hosts' processes.
#include "jobmon/monitor/rank_waits.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "jobmon/common/whole_number.h"

namespace jobmon::monitor {

namespace {

// The hosts that report a task's processes (normally one; two steps of the
// job running at once may both have a task of that id), and those processes.
struct TaskFound {
  std::vector<std::string> hosts;
  std::vector<const ProcessWait*> processes;
};

std::string HostsOf(const TaskFound& found) {
  std::string hosts;
  for (const std::string& host : found.hosts) hosts += (hosts.empty() ? "" : " and ") + host;
  return hosts;
}

int ThreadsOf(const ProcessWait& p) {
  int threads = 0;
  for (const auto& [state, n] : p.threads) threads += n;
  return threads;
}

// "python3 pid 4242 S in hrtimer_nanosleep (...); python3 pid 4250 ...":
// the task's busiest processes (its rank before the rank's helpers).
std::string WaitsOf(std::vector<const ProcessWait*> processes) {
  auto pid = [](const ProcessWait* p) { return WholeNumber<unsigned>(p->pid).value_or(0); };
  std::sort(processes.begin(), processes.end(), [&](const ProcessWait* a, const ProcessWait* b) {
    const int ta = ThreadsOf(*a), tb = ThreadsOf(*b);
    return ta != tb ? ta > tb : pid(a) < pid(b);
  });
  std::string out;
  for (size_t i = 0; i < processes.size() && i < kProcessesPerTask; ++i) {
    ProcessWait shown = *processes[i];
    shown.task.clear();  // the line names it once
    out += (i ? "; " : "") + DescribeProcess(shown);
  }
  if (processes.size() > kProcessesPerTask) {
    out += fmt::format("; {} more", processes.size() - kProcessesPerTask);
  }
  return out;
}

}  // namespace

RankWaits DescribeRankWaits(const triage::RankProgress& ranks,
                            const std::vector<HostEvidence>& hosts) {
  RankWaits out;
  if (ranks.ranks().size() < 2) return out;
  std::map<int, TaskFound> found;
  for (const HostEvidence& host : hosts) {
    for (const ProcessWait& p : host.job_processes) {
      auto task = WholeNumber<int>(p.task);
      if (!task) continue;
      TaskFound& f = found[*task];
      if (std::find(f.hosts.begin(), f.hosts.end(), host.host) == f.hosts.end()) {
        f.hosts.push_back(host.host);
      }
      f.processes.push_back(&p);
    }
  }
  // The tasks to show: those that stopped first, the other ranks', then any
  // other task a host reports.
  std::vector<int> order;
  auto add = [&](int task) {
    if (task >= 0 && std::find(order.begin(), order.end(), task) == order.end()) {
      order.push_back(task);
    }
  };
  const auto stopped = ranks.Stopped();
  std::map<triage::RankId, std::string> places;
  if (stopped) {
    for (const triage::RankId& id : stopped->ranks) {
      add(id.task);
      auto f = found.find(id.task);
      if (f == found.end()) continue;
      // "rank 1" says nothing of the task; "task 1" already does.
      places[id] =
          (id.rank >= 0 ? fmt::format("task {} on ", id.task) : "on ") + HostsOf(f->second);
      for (const std::string& host : f->second.hosts) {
        if (std::find(out.stopped_hosts.begin(), out.stopped_hosts.end(), host) ==
            out.stopped_hosts.end())
          out.stopped_hosts.push_back(host);
      }
    }
    std::sort(out.stopped_hosts.begin(), out.stopped_hosts.end());
    out.stopped = triage::RankProgress::Describe(*stopped, places);
  }
  for (const auto& [id, last] : ranks.ranks()) add(id.task);
  for (const auto& [task, f] : found) add(task);
  for (int task : order) {
    if (out.waits.size() == kMaxRankWaitLines) break;
    auto f = found.find(task);
    if (f == found.end()) continue;
    out.waits.push_back(
        fmt::format("task {} on {}: {}", task, HostsOf(f->second), WaitsOf(f->second.processes)));
  }
  return out;
}

}  // namespace jobmon::monitor
