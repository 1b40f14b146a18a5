#include "jobmon/triage/kernel_log.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <map>

#include "jobmon/common/text_lines.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {

const char* ToString(KernelEventKind kind) {
  switch (kind) {
    case KernelEventKind::kOomKill:
      return "oom-kill";
    case KernelEventKind::kNvidiaXid:
      return "nvidia-xid";
    case KernelEventKind::kAmdgpu:
      return "amdgpu";
  }
  return "?";
}

namespace {

// Line prefixes, as the tools print them (util-linux dmesg, systemd
// journalctl -k, rsyslog's kern.log). Times compare as printed: zone
// offsets are ignored, as for the job log's own stamps.
const RE2& BootStamp() {  // dmesg (default), journalctl -o short-monotonic
  static const RE2 re(R"(^\[\s*(\d+\.\d+)\]\s?)");
  return re;
}
const RE2& CtimeStamp() {  // dmesg -T: "[Sun Nov 22 23:04:01 2026]"
  static const RE2 re(
      R"(^\[(?:[A-Z][a-z]{2} )?([A-Z][a-z]{2}) +(\d{1,2}) (\d\d:\d\d:\d\d) (\d{4})\]\s?)");
  return re;
}
const RE2& IsoStamp() {  // dmesg --time-format iso, journalctl -o short-iso, rsyslog
  static const RE2 re(R"(^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[,.]?\d*)(?:Z|[+-]\d\d:?\d\d)?\s+)");
  return re;
}
const RE2& SyslogStamp() {  // journalctl -k (short), syslog: "Nov 22 23:04:01 "
  static const RE2 re(R"(^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d:\d\d:\d\d) )");
  return re;
}
const RE2& HostKernel() {  // journalctl / syslog: "node2 kernel: "
  static const RE2 re(R"(^(\S+) kernel: )");
  return re;
}

std::optional<int> Month(std::string_view name) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (name == kMonths[i]) return i + 1;
  }
  return std::nullopt;
}

std::optional<double> DateTime(std::string_view month, int day, std::string_view hms, int year) {
  auto m = Month(month);
  if (!m) return std::nullopt;
  return ParseIsoTimestamp(fmt::format("{:04}-{:02}-{:02}T{}", year, *m, day, hms));
}

struct Stamped {
  std::string_view body;
  std::optional<double> boot, wall;
  std::string host;
};

Stamped StripPrefix(std::string_view line, int year) {
  Stamped s;
  re2::StringPiece rest(line.data(), line.size());
  std::string a, b, c, d;
  int day = 0;
  if (RE2::Consume(&rest, BootStamp(), &a)) {
    s.boot = std::stod(a);
  } else if (RE2::Consume(&rest, CtimeStamp(), &a, &day, &b, &c)) {
    s.wall = DateTime(a, day, b, std::stoi(c));
  } else if (RE2::Consume(&rest, IsoStamp(), &a)) {
    s.wall = ParseIsoTimestamp(a);
  } else if (RE2::Consume(&rest, SyslogStamp(), &a, &day, &b)) {
    s.wall = DateTime(a, day, b, year);
  }
  if (RE2::Consume(&rest, HostKernel(), &d)) {
    s.host = d;
    if (RE2::Consume(&rest, BootStamp(), &a)) s.boot = std::stod(a);  // kern.log keeps dmesg's
  }
  s.body = std::string_view(rest.data(), rest.size());
  return s;
}

// Linux mm/oom_kill.c dump_oom_summary (4.19+; "OOM[N]: " prefix proposed,
// not merged): "oom-kill:constraint=%s,nodemask=%*pbl,cpuset=...,
// mems_allowed=...[,oom_memcg=%s],task_memcg=%s,task=%s,pid=%d,uid=%d".
std::map<std::string, std::string> OomSummaryFields(std::string_view body) {
  std::map<std::string, std::string> fields;
  size_t at = body.find("oom-kill:");
  if (at == std::string_view::npos) return fields;
  std::string_view rest = body.substr(at + 9);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t eq = item.find('=');
    if (eq != std::string_view::npos) fields[std::string(item.substr(0, eq))] = item.substr(eq + 1);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return fields;
}

// mm/oom_kill.c __oom_kill_process: "%s: Killed process %d (%s) total-vm:..."
// (4.19+, %s "Out of memory" or "Memory cgroup out of memory"), before that
// "Killed process %d (%s) total-vm:..." after "%s: Kill process %d (%s)
// score %u or sacrifice child".
const RE2& KilledProcess() {
  static const RE2 re(R"((?:([A-Za-z ()_]+): )?Killed process (\d+) \((.*?)\)(?:[ ,]|$))");
  return re;
}
// mm/memcontrol.c: "Memory cgroup stats for %s:" (v1 stats, 4.19+ also
// after the summary) and, up to 4.18, "Task in %s killed as a result of
// limit of %s".
const RE2& MemcgStats() {
  static const RE2 re(R"(^Memory cgroup stats for (\S+?):?$)");
  return re;
}
const RE2& TaskIn() {
  static const RE2 re(R"(^Task in (\S+) killed as a result of limit of (\S+))");
  return re;
}
// NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c
// (515.43.04..595.45.04): "NVRM: Xid (PCI:%04x:%02x:%02x[ GPU-I:%02u[
// GPU-CI:%02u]]): %d, [pid=%s, name=%s, ]%s"; error containment
// (kern_gpu_error_cont_ga100.c): "...: 94, pid=7194, Contained: ...".
const RE2& Xid() {
  static const RE2 re(R"(NVRM: Xid \((PCI:[0-9A-Fa-f:.]+)[^)]*\): (\d+), (.*))");
  return re;
}
const RE2& XidPid() {
  static const RE2 re(R"(^pid=('?[^,]*?'?), (?:name=(.*?), )?(.*))");
  return re;
}
// torvalds/linux drivers/gpu/drm/amd/amdgpu: gmc_v9_0.c / gmc_v10_0.c
// "[%s] [retry|no-retry ]page fault (src_id:%u ring:%u vmid:%u pasid:%u[,
// for process %s pid %d thread %s pid %d])" (the process part moved to its
// own line in 6.x), amdgpu_job.c amdgpu_job_timedout "ring %s timeout,
// signaled seq=%u, emitted seq=%u" and "Process information: process %s
// pid %d thread %s pid %d"; dev_err prefixes "amdgpu 0000:03:00.0: ".
const RE2& AmdgpuFault() {
  static const RE2 re(
      R"((\S*page fault \(src_id:\d+ ring:\d+ vmid:\d+ pasid:\d+|ring \S+ timeout, signaled seq=\d+, emitted seq=\d+))");
  return re;
}
const RE2& AmdgpuProcess() {
  static const RE2 re(R"([Pp]rocess (\S+) pid (\d+) thread)");
  return re;
}
const RE2& AmdgpuDevice() {
  static const RE2 re(R"(amdgpu (\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d))");
  return re;
}

}  // namespace

std::vector<KernelEvent> ParseKernelLog(std::string_view text, int year) {
  std::vector<KernelEvent> events;
  std::map<int64_t, std::map<std::string, std::string>> summaries;  // pid -> fields
  std::string report_memcg;  // from the stats header of the report being read
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t open_amdgpu = kNone;  // an amdgpu event still without its process
  uint64_t number = 0;
  for (std::string_view line : TextLines(text)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Stamped s = StripPrefix(line, year);
    re2::StringPiece body(s.body.data(), s.body.size());
    auto event = [&](KernelEventKind kind) {
      KernelEvent e;
      e.kind = kind;
      e.line = number;
      e.text = std::string(line.substr(0, kEvidenceChars));
      e.boot_seconds = s.boot;
      e.wall_time = s.wall;
      e.host = s.host;
      return e;
    };
    std::string a, b, c, d;
    int64_t pid = 0;
    if (s.body.find("invoked oom-killer:") != std::string_view::npos) {
      report_memcg.clear();
    } else if (s.body.find("oom-kill:") != std::string_view::npos) {
      auto fields = OomSummaryFields(s.body);
      if (auto it = fields.find("pid"); it != fields.end()) {
        try {
          summaries[std::stoll(it->second)] = fields;
        } catch (const std::exception&) {
        }
      }
    } else if (RE2::PartialMatch(body, MemcgStats(), &a)) {
      report_memcg = a;
    } else if (RE2::PartialMatch(body, TaskIn(), &a, &b)) {
      report_memcg = a;
    } else if (RE2::PartialMatch(body, KilledProcess(), &a, &pid, &b)) {
      KernelEvent e = event(KernelEventKind::kOomKill);
      e.pid = pid;
      e.task = b;
      e.detail = a;
      e.memcg = report_memcg;
      if (auto it = summaries.find(pid); it != summaries.end()) {
        const auto& f = it->second;
        for (const char* key : {"task_memcg", "oom_memcg"}) {
          if (auto m = f.find(key); m != f.end() && !m->second.empty() && m->second != "(null)") {
            e.memcg = m->second;
            break;
          }
        }
        if (auto m = f.find("constraint"); m != f.end()) e.constraint = m->second;
        summaries.erase(it);
      }
      if (e.constraint.empty() && a.find("cgroup") != std::string::npos)
        e.constraint = "CONSTRAINT_MEMCG";
      events.push_back(std::move(e));
    } else if (int xid = 0; RE2::PartialMatch(body, Xid(), &a, &xid, &b)) {
      KernelEvent e = event(KernelEventKind::kNvidiaXid);
      e.device = a;
      e.xid = xid;
      e.detail = b;
      re2::StringPiece rest(b.data(), b.size());
      if (RE2::FullMatch(rest, XidPid(), &c, &d, &e.detail)) {
        try {
          e.pid = std::stoll(c);
        } catch (const std::exception&) {  // "'<unknown>'"
        }
        e.task = d;
      }
      events.push_back(std::move(e));
    } else if (s.body.find("amdgpu") != std::string_view::npos &&
               RE2::PartialMatch(body, AmdgpuFault(), &a)) {
      KernelEvent e = event(KernelEventKind::kAmdgpu);
      e.detail = a;
      RE2::PartialMatch(body, AmdgpuDevice(), &e.device);
      if (RE2::PartialMatch(body, AmdgpuProcess(), &c, &pid)) {
        e.task = c;
        e.pid = pid;
      }
      const bool has_process = e.pid.has_value();
      events.push_back(std::move(e));
      open_amdgpu = has_process ? kNone : events.size() - 1;
      continue;
    } else if (open_amdgpu != kNone && RE2::PartialMatch(body, AmdgpuProcess(), &c, &pid)) {
      events[open_amdgpu].task = c;
      events[open_amdgpu].pid = pid;
    }
    open_amdgpu = kNone;
  }
  return events;
}

namespace {

// Process names (comm) of training processes: the interpreter, torch 2.x's
// renamed main thread (torch/csrc/Module.cpp `pt_main_thread`), launchers.
bool TrainingTaskName(const std::string& name, const std::set<std::string>& log_names) {
  static const RE2 re(R"(python[0-9.]*|pt_main_thread|pt_elastic|torchrun|deepspeed|accelerate)");
  return log_names.count(name) > 0 || RE2::FullMatch(name, re);
}

}  // namespace

std::vector<KernelMatch> MatchKernelEvents(const std::vector<KernelEvent>& events,
                                           const KernelMatchInput& in) {
  static const RE2 kJobCgroup(R"(/job_(\d+)(?:/|$))");
  constexpr double kSlackSeconds = 60;
  std::vector<KernelMatch> out;
  for (const KernelEvent& e : events) {
    KernelMatch m;
    std::string who =
        e.task.empty() ? std::string("a process")
                       : fmt::format("{}{}", e.task, e.pid ? fmt::format(" (pid {})", *e.pid) : "");
    std::string cgroup_job;
    if (RE2::PartialMatch(e.memcg, kJobCgroup, &cgroup_job) && in.job_id) {
      m.matched = cgroup_job == *in.job_id;
      m.basis = m.matched ? fmt::format("its memory cgroup {} is this job's (job_{})", e.memcg,
                                        *in.job_id)
                          : fmt::format("its memory cgroup {} is job {}'s, not this job ({})",
                                        e.memcg, cgroup_job, *in.job_id);
      out.push_back(m);
      continue;
    }
    if (e.pid && in.pids.count(*e.pid)) {
      m.matched = true;
      m.basis = fmt::format("the log names pid {}", *e.pid);
      out.push_back(m);
      continue;
    }
    const bool training = TrainingTaskName(e.task, in.names);
    if (e.wall_time && in.log_start && in.log_end) {
      const double t = *e.wall_time;
      if (t < *in.log_start - kSlackSeconds || t > *in.log_end + kSlackSeconds) {
        m.basis = "its time lies outside the log's time span";
      } else if (!training) {
        m.basis = fmt::format("within the log's time span, but {} is no training process", who);
      } else {
        m.matched = true;
        m.basis = fmt::format(
            "its time lies within the log's time span and {} is a training "
            "process",
            who);
      }
      out.push_back(m);
      continue;
    }
    // Nothing to compare: the kernel log was given for this job.
    std::string why =
        fmt::format("no job cgroup{}, no pid the log names and no wall-clock time to compare",
                    cgroup_job.empty() ? "" : " (the job's id is unknown)");
    if (e.kind == KernelEventKind::kOomKill) {
      m.matched = in.sigkill && training;
      m.basis = m.matched ? why + fmt::format(
                                      ": only the log's SIGKILL and the killed task's name "
                                      "({}) tie it to the job",
                                      e.task)
                          : why + (in.sigkill ? fmt::format(", and {} is no training process", who)
                                              : std::string(", and the log shows no SIGKILL"));
    } else {
      m.matched = e.task.empty() || training;
      m.basis = why + ": reported because the kernel log was given for this job";
    }
    m.weak = m.matched;
    out.push_back(m);
  }
  return out;
}

}  // namespace jobmon::triage
