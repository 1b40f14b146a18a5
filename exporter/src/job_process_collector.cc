// job_processes: reads the job's /proc/PID/{stat,wchan} and task/*/{stat,wchan},
// and asks Slurm which of them are its tasks.
#include "jobmon/exporter/job_process_collector.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/whole_number.h"
#include "jobmon/exporter/gpu_selection.h"
#include "jobmon/exporter/process_wait.h"
#include "jobmon/exporter/slurm_listpids.h"

namespace jobmon::exporter {

namespace {

// A stat line is a few hundred bytes; a kernel symbol at most KSYM_NAME_LEN
// (512). More is not the file the kernel writes.
constexpr size_t kStatLimit = 4096;
constexpr size_t kWchanLimit = 1024;

// A task's stat and its wchan as a label.
struct Wait {
  PidStat stat;
  std::string wchan;  // label
};

}  // namespace

Expected<Families> JobProcessCollector::Collect() {
  FamilyBuilder b;
  // Each read: nullopt when the task is gone (it may exit at any point
  // between the listing and the last read), a Problem when broken.
  auto read_file = [this](const std::string& path, size_t limit) -> std::optional<std::string> {
    auto text = ReadProcessFile(path, limit);
    if (!text) {
      Problem(text.error().message);
      return std::nullopt;
    }
    return *text;
  };
  auto read_stat = [&](const std::string& dir) -> std::optional<PidStat> {
    auto text = read_file(dir + "/stat", kStatLimit);
    if (!text) return std::nullopt;
    auto stat = ParsePidStat(*text);
    if (!stat) Problem(dir + "/stat: not a stat line");
    return stat;
  };
  auto read_wait = [&](const std::string& dir) -> std::optional<Wait> {
    auto stat = read_stat(dir);
    if (!stat) return std::nullopt;
    auto wchan = read_file(dir + "/wchan", kWchanLimit);
    if (!wchan) return std::nullopt;
    return Wait{*stat, WchanLabel(*wchan, stat->state)};
  };

  std::vector<PidStat> found;
  for (unsigned pid : JobPids(procfs_, job_id_)) {
    if (auto stat = read_stat(procfs_ + "/" + std::to_string(pid))) {
      stat->pid = pid;  // the directory's, which the next reads use
      found.push_back(*stat);
    }
  }
  // Slurm's own list: the processes where no cgroup names the job
  // (proctrack/linuxproc), and each task's pid in any case.
  const ListPidsAnswer listed = listpids_ ? listpids_() : ListPidsAnswer{};
  if (found.empty()) {
    if (!listed.problem.empty()) Problem(listed.problem);
    std::set<unsigned> pids;
    for (const ListedPid& row : listed.rows) {
      if (!pids.insert(row.pid).second) continue;
      if (auto stat = read_stat(procfs_ + "/" + std::to_string(row.pid))) {
        stat->pid = row.pid;
        found.push_back(*stat);
      }
    }
  }
  const std::map<unsigned, unsigned> slurm_tasks = TasksOf(found, TaskPids(listed.rows));
  b.Gauge(metric_names::kJobProcesses,
          "The job's processes on the node (cgroup job_<id>, else scontrol listpids), before the "
          "cap on those reported",
          {}, static_cast<double>(found.size()));

  for (const PidStat& process : Busiest(std::move(found), limits_.processes)) {
    const std::string pid = std::to_string(process.pid);
    const std::string dir = procfs_ + "/" + pid;
    auto own = read_wait(dir);
    if (!own) continue;
    // Thread ids in order (procfs lists them so; a fixture tree may not),
    // the main thread and the first started first.
    std::vector<unsigned> tids;
    if (DIR* tasks = opendir((dir + "/task").c_str())) {
      while (dirent* entry = readdir(tasks)) {
        if (auto tid = WholeNumber<unsigned>(entry->d_name)) tids.push_back(*tid);
      }
      closedir(tasks);
    } else if (errno == ENOENT || errno == ESRCH) {
      continue;  // gone
    } else {
      Problem(dir + "/task: " + std::strerror(errno));
    }
    std::map<std::string, unsigned> states, wchans;
    std::sort(tids.begin(), tids.end());
    if (tids.size() > limits_.threads) tids.resize(limits_.threads);
    for (unsigned tid : tids) {
      if (auto thread = read_wait(dir + "/task/" + std::to_string(tid))) {
        ++states[std::string(1, thread->stat.state)];
        ++wchans[thread->wchan];
      }
    }
    auto task = slurm_tasks.find(process.pid);
    b.Gauge(metric_names::kJobProcessInfo,
            "1 per reported process of the job: its own state and kernel wait channel, and its "
            "Slurm task (SLURM_PROCID) or that of its nearest ancestor that is one",
            {{"pid", pid},
             {"comm", CommLabel(own->stat.comm)},
             {"state", std::string(1, own->stat.state)},
             {"wchan", own->wchan},
             {"task", task == slurm_tasks.end() ? "" : std::to_string(task->second)}},
            1);
    for (const auto& [state, count] : states) {
      b.Gauge(metric_names::kJobProcessThreads, "The process's threads in each state",
              {{"pid", pid}, {"state", state}}, count);
    }
    for (const auto& [wchan, count] : LargestCounts(wchans, limits_.wchans)) {
      b.Gauge(metric_names::kJobProcessWchanThreads,
              "The process's threads in each kernel wait channel (the largest few, then other)",
              {{"pid", pid}, {"wchan", wchan}}, count);
    }
  }
  return b.Take();
}

}  // namespace jobmon::exporter
