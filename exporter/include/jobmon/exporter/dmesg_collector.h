#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/exporter/collector.h"
#include "jobmon/exporter/kmsg_source.h"

namespace jobmon::exporter {

// One /dev/kmsg record (Documentation/ABI/testing/dev-kmsg):
// "<prio>,<seq>,<usec>,<flags>[,...];<message>\n" followed by optional
// " KEY=value" continuation lines.
struct KmsgRecord {
  int level = 0;  // prio & 7: 0 emerg .. 7 debug
  uint64_t sequence = 0;
  std::string message;
};

// Splits a buffer into complete records; `consumed` is how much of `text`
// they used (a trailing partial record stays for the next read).
std::vector<KmsgRecord> ParseKmsgRecords(std::string_view text, size_t* consumed);

// What a kernel message says about GPUs.
struct GpuKernelError {
  bool is_gpu_error = false;
  std::optional<int> xid;  // NVIDIA "NVRM: Xid (PCI:...): <n>, ..."
};
GpuKernelError ClassifyKernelMessage(const KmsgRecord& record);

// dmesg: GPU and driver errors in the kernel log since the exporter started.
// /dev/kmsg is opened non-blocking and positioned at its end when the
// collector (or the exporter's KmsgSource) is built, so a previous job's
// errors are never counted.
// hw_dmesg_gpu_errors_total, hw_gpu_xid_errors_total{xid},
// hw_dmesg_lost_records_total (ring buffer overran us between scrapes).
class DmesgCollector : public Collector {
 public:
  explicit DmesgCollector(std::string dev);
  // Reads the exporter's one kernel-log descriptor (inherited from the
  // prolog or opened at start) through a duplicate of its own: a collector
  // rebuilt after a stuck one continues at the shared position.
  explicit DmesgCollector(const KmsgSource& source);
  ~DmesgCollector() override;
  DmesgCollector(const DmesgCollector&) = delete;
  DmesgCollector& operator=(const DmesgCollector&) = delete;
  Expected<Families> Collect() override;

 private:
  std::string path_;
  int fd_ = -1;
  std::string open_error_;
  std::string pending_;  // partial record (regular-file fixtures only)
  double gpu_errors_ = 0;
  double lost_records_ = 0;
  std::map<int, double> xid_errors_;
};

}  // namespace jobmon::exporter
