#pragma once
// One collector per file (node_exporter's shape): a name, and Collect(),
// which reads its sources and returns metric families. Collectors may block
// in the kernel; the CollectorPool keeps that from reaching a scrape.

#include <prometheus/metric_family.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::exporter {

struct KmsgSource;

using Families = std::vector<prometheus::MetricFamily>;
using Labels = std::map<std::string, std::string>;

class Collector {
 public:
  virtual ~Collector() = default;
  // An error: the collector could not run at all (it serves nothing).
  virtual Expected<Families> Collect() = 0;
  // The files the last Collect() found broken (unreadable or not the
  // number the kernel prints): each dropped only its own series, and the
  // pool marks the collector failed and says why. Read by the thread that
  // called Collect().
  std::vector<std::string> TakeProblems() { return std::exchange(problems_, {}); }

 protected:
  void Problem(std::string what) { problems_.push_back(std::move(what)); }

 private:
  std::vector<std::string> problems_;
};

// The GPUs this exporter serves (gpu_selection.h): the job's own on a node
// shared with other jobs, or every GPU of the node.
struct GpuSelection {
  std::optional<std::set<int>> only;  // nullopt: every GPU of the node
  std::string source = "all";         // slurm | cgroup | all (the prolog's source)
  bool Serves(int gpu) const { return !only || only->count(gpu) > 0; }
};

// Where collectors read from (overridable for fixture trees).
struct SourcePaths {
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
  std::string dev = "/dev";
  std::string tfevents;  // empty: no training collector
  std::string nvml_library = "libnvidia-ml.so.1";
  GpuSelection gpus;
  std::string job_id;  // Slurm job id: its processes, by cgroup (empty: not known)
  // `scontrol listpids` for job_processes (listpids_command.h): the
  // program, the slurmd node name (empty: scontrol guesses) and slurm.conf
  // (empty: Slurm's default).
  std::string scontrol = "scontrol";
  std::string slurm_node;
  std::string slurm_conf;
  // The kernel log as the exporter opened or inherited it (kmsg_source.h);
  // null: the dmesg collector opens <dev>/kmsg itself.
  std::shared_ptr<const KmsgSource> kmsg;
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
};

// A named way to build a collector; the pool builds a fresh instance when it
// abandons a stuck one (the old instance stays with its stuck thread).
struct CollectorFactory {
  std::string name;
  std::function<std::unique_ptr<Collector>()> make;
  // Set for collectors that need something a node may lack (a GPU driver):
  // checked once at start; a reason means the collector is off, said once,
  // rather than failing every scrape.
  std::function<std::optional<std::string>()> why_off;
};

// The explicit list of collectors (no static registration).
std::vector<CollectorFactory> BuiltinCollectors(const SourcePaths& paths);

// The collectors named in a comma-separated list (all when empty); an
// unknown name is an error that lists the known ones.
Expected<std::vector<CollectorFactory>> SelectCollectors(std::vector<CollectorFactory> all,
                                                         const std::string& names);

// Removes the collectors that are off on this node; returns one line per
// removed collector saying why.
std::vector<std::string> DropUnavailable(std::vector<CollectorFactory>& collectors);

// Builds families: one call per sample.
class FamilyBuilder {
 public:
  void Gauge(const std::string& name, const std::string& help, const Labels& labels, double value);
  void Counter(const std::string& name, const std::string& help, const Labels& labels,
               double value);
  Families Take();

 private:
  prometheus::MetricFamily& FamilyFor(const std::string& name, const std::string& help,
                                      prometheus::MetricType type);
  Families families_;
};

// Reads a whole (small) file; procfs files have no useful st_size.
Expected<std::string> ReadSmallFile(const std::string& path, size_t limit = 4 << 20);

// ReadSmallFile for a file under /proc/PID: nullopt when the process is gone
// (ENOENT: it exited before the open; ESRCH: during the read), an error
// naming the file for any other failure.
Expected<std::optional<std::string>> ReadProcessFile(const std::string& path, size_t limit);

// The text of a sysfs/procfs attribute (one read: an attribute comes whole in
// the first read()); nullopt when the file is absent or the driver has no
// value to give (ENOENT, ENODATA, EOPNOTSUPP); an error naming the file for
// any other failure.
Expected<std::optional<std::string>> ReadAttribute(const std::string& path);

// A counter as the kernel prints it ("%llu\n", "%u\n"): a plain unsigned
// decimal and an optional trailing newline. "-5", "nan", "inf", "1e3",
// "0x10", "+7", an empty file or an overflow are not counters.
std::optional<uint64_t> ParseCounter(std::string_view text);
// A signed integer attribute ("%d\n": hwmon temperatures may be negative).
std::optional<int64_t> ParseInteger(std::string_view text);

// ReadAttribute then ParseCounter/ParseInteger: nullopt when absent, an
// error naming the file when it holds anything else.
Expected<std::optional<uint64_t>> ReadCounterFile(const std::string& path);
Expected<std::optional<int64_t>> ReadIntegerFile(const std::string& path);

}  // namespace jobmon::exporter
