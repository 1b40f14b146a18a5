// dmesg: GPU/driver errors from /dev/kmsg.
#include "jobmon/exporter/dmesg_collector.h"

#include <fcntl.h>
#include <re2/re2.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::exporter {

namespace {

// The kernel refuses reads into a buffer smaller than one record (EINVAL);
// records are at most ~8 KiB with their dictionary.
constexpr size_t kReadBuffer = 16384;
// Bounds one collection; the rest is read at the next scrape.
constexpr int kMaxReadsPerCollect = 20000;

}  // namespace

std::vector<KmsgRecord> ParseKmsgRecords(std::string_view text, size_t* consumed) {
  std::vector<KmsgRecord> records;
  size_t pos = 0;
  *consumed = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == text.npos) break;  // partial record
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    // Continuation lines (" SUBSYSTEM=pci") belong to the previous record.
    if (line.empty() || line.front() == ' ') {
      *consumed = pos;
      continue;
    }
    *consumed = pos;
    size_t semicolon = line.find(';');
    if (semicolon == line.npos) continue;
    std::string_view header = line.substr(0, semicolon);
    size_t comma = header.find(',');
    auto prio = WholeNumber<uint64_t>(header.substr(0, comma));
    if (!prio) continue;
    KmsgRecord record;
    record.level = static_cast<int>(*prio & 7);
    if (comma != header.npos) {
      std::string_view rest = header.substr(comma + 1);
      if (auto seq = WholeNumber<uint64_t>(rest.substr(0, rest.find(',')))) record.sequence = *seq;
    }
    record.message = std::string(line.substr(semicolon + 1));
    records.push_back(std::move(record));
  }
  return records;
}

GpuKernelError ClassifyKernelMessage(const KmsgRecord& record) {
  // NVIDIA: "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has
  // fallen off the bus."
  static const RE2 xid_pattern(R"(NVRM: Xid \([^)]*\): (\d+))");
  // amdgpu/KFD faults worth counting whatever their log level; anything
  // else from the driver counts only at err level or worse.
  static const RE2 amd_fault(
      "(?i)(amdgpu|\\[drm(:\\w+)?\\]|kfd).*(ring \\S+ timeout|gpu reset|page fault|"
      "protection_fault|poison|uncorrectable|cper)");
  static const RE2 amd_source(R"((?i)\bamdgpu\b|\bkfd\b|\[drm)");
  // Frames of a call trace ("amdgpu_cper_ring_write+0x1c/0x90 [amdgpu]") are
  // part of one error already counted.
  static const RE2 stack_frame(R"(^\s*(\? )?[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+)");
  GpuKernelError out;
  int xid = 0;
  if (RE2::PartialMatch(record.message, xid_pattern, &xid)) {
    out.is_gpu_error = true;
    out.xid = xid;
    return out;
  }
  if (RE2::PartialMatch(record.message, stack_frame)) return out;
  if (record.message.find("NVRM:") != std::string::npos && record.level <= 3) {
    out.is_gpu_error = true;
    return out;
  }
  if (RE2::PartialMatch(record.message, amd_fault) ||
      (record.level <= 3 && RE2::PartialMatch(record.message, amd_source))) {
    out.is_gpu_error = true;
  }
  return out;
}

DmesgCollector::DmesgCollector(std::string dev) : path_(std::move(dev) + "/kmsg") {
  fd_ = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    open_error_ = path_ + ": " + std::strerror(errno);
    return;
  }
  // From now on only: a previous job's errors are not this job's.
  lseek(fd_, 0, SEEK_END);
}

DmesgCollector::DmesgCollector(const KmsgSource& source) : path_(source.where) {
  if (!source.fd.valid()) {
    open_error_ = source.where;
    return;
  }
  fd_ = fcntl(source.fd.get(), F_DUPFD_CLOEXEC, 3);
  if (fd_ < 0) open_error_ = source.where + ": dup: " + std::strerror(errno);
}

DmesgCollector::~DmesgCollector() {
  if (fd_ >= 0) close(fd_);
}

Expected<Families> DmesgCollector::Collect() {
  if (fd_ < 0) return Error{open_error_};
  std::string buffer(kReadBuffer, '\0');
  for (int reads = 0; reads < kMaxReadsPerCollect; ++reads) {
    ssize_t n = read(fd_, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) {
      // The ring buffer overwrote records before we read them; the next
      // read continues with the oldest one still there.
      lost_records_ += 1;
      continue;
    }
    if (n < 0 && errno == EAGAIN) break;  // nothing new
    if (n < 0) return Error{path_ + ": " + std::strerror(errno)};
    if (n == 0) break;  // end of a regular file (fixtures)
    pending_.append(buffer.data(), static_cast<size_t>(n));
    size_t consumed = 0;
    for (const KmsgRecord& record : ParseKmsgRecords(pending_, &consumed)) {
      GpuKernelError error = ClassifyKernelMessage(record);
      if (!error.is_gpu_error) continue;
      gpu_errors_ += 1;
      if (error.xid) xid_errors_[*error.xid] += 1;
    }
    pending_.erase(0, consumed);
    if (pending_.size() > kReadBuffer) pending_.clear();  // not kmsg records at all
  }
  FamilyBuilder families;
  families.Counter(metric_names::kDmesgGpuErrorsTotal,
                   "GPU/driver errors in the kernel log since the exporter started", {},
                   gpu_errors_);
  families.Counter("hw_dmesg_lost_records_total",
                   "Kernel log records overwritten before the exporter read them", {},
                   lost_records_);
  for (const auto& [xid, count] : xid_errors_) {
    families.Counter(metric_names::kGpuXidErrorsTotal,
                     "NVIDIA Xid errors in the kernel log, by code", {{"xid", std::to_string(xid)}},
                     count);
  }
  return families.Take();
}

}  // namespace jobmon::exporter
