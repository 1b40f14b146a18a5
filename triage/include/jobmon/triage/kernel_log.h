#pragma once
// Kernel evidence for a job (`jobmon triage --kernel-log FILE`): the Linux
// OOM killer's report, NVIDIA Xid and amdgpu fault lines, parsed from the
// text `dmesg` or `journalctl -k` prints, and matched to the job. The
// kernel names processes, pids and cgroups, never Slurm jobs: the match
// says what it rests on.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

enum class KernelEventKind { kOomKill, kNvidiaXid, kAmdgpu };
const char* ToString(KernelEventKind kind);

struct KernelEvent {
  KernelEventKind kind = KernelEventKind::kOomKill;
  std::string file;                    // set by the caller
  uint64_t line = 0;                   // 1-based in its file
  std::string text;                    // the line as printed (cut at kEvidenceChars)
  std::optional<double> boot_seconds;  // "[ 2783.863263]": since boot, not a date
  std::optional<double> wall_time;     // dmesg -T / --time-format iso, journalctl (unix s)
  std::string host;                    // journalctl's / syslog's host field
  std::optional<int64_t> pid;          // the killed / faulting process
  std::string task;                    // its name (comm)
  std::string memcg;                   // OOM: task_memcg, else oom_memcg or the stats header
  std::string constraint;              // OOM: CONSTRAINT_MEMCG, CONSTRAINT_NONE, ...
  int xid = 0;                         // NVIDIA Xid number
  std::string device;                  // Xid: "PCI:0000:3b:00"; amdgpu: "0000:03:00.0"
  std::string detail;                  // Xid / amdgpu message after the ids
};

// Every OOM kill, Xid and amdgpu fault in `text`, in order. `year` dates
// journalctl's short format ("Nov 22 23:04:01 host kernel: ..."), which
// prints none. Lines of other messages are skipped.
std::vector<KernelEvent> ParseKernelLog(std::string_view text, int year);

// What the log says about the job, for the match.
struct KernelMatchInput {
  std::optional<std::string> job_id;
  std::optional<double> log_start, log_end;  // the log's own first/last timestamps
  std::set<int64_t> pids;                    // pids the log names (torchrun, launchers)
  std::set<std::string> names;               // binaries the log names ("python3.11")
  bool sigkill = false;                      // the log or Slurm shows a SIGKILL
};

struct KernelMatch {
  bool matched = false;
  bool weak = false;  // matched only by the SIGKILL and a training task's name
  std::string basis;  // what the match (or its refusal) rests on
};

// One verdict per event, in order. First that decides: the memory cgroup
// (`job_<id>` in its path: this job or another), a pid the log names, the
// wall-clock time inside the log's span with a training task's name, and,
// with none of those to compare, the log's SIGKILL with a training task's
// name (weak).
std::vector<KernelMatch> MatchKernelEvents(const std::vector<KernelEvent>& events,
                                           const KernelMatchInput& input);

}  // namespace jobmon::triage
