// Kernel evidence (`jobmon triage --kernel-log`): the parse of the real
// OOM-killer reports in tests/fixtures/real/pytorch/*.dmesg.txt (kernel
// 6.18), single lines built from the format strings named in
// triage/src/kernel_log.cc, the match to the job, and the analysis that
// makes a matched OOM kill the root of the log's SIGKILL.

#include "jobmon/triage/kernel_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

const std::string kDir = std::string(JOBMON_FIXTURES) + "/real/pytorch/";

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(KernelLog, RealMemcgOomReportIsOneKillWithItsCgroup) {
  auto events = ParseKernelLog(Read(kDir + "srun-oom.dmesg.txt"), 2026);
  ASSERT_EQ(events.size(), 1u);
  const KernelEvent& e = events[0];
  EXPECT_EQ(e.kind, KernelEventKind::kOomKill);
  EXPECT_EQ(e.pid, 17914);
  EXPECT_EQ(e.task, "python3");
  EXPECT_EQ(e.constraint, "CONSTRAINT_MEMCG");
  EXPECT_EQ(e.memcg, "/process_api/93f55d2f1cabc2080f3e4d1ac555a355/fixture-oom-1-1");
  ASSERT_TRUE(e.boot_seconds.has_value());
  EXPECT_NEAR(*e.boot_seconds, 2783.863836, 1e-6);
  EXPECT_FALSE(e.wall_time.has_value());  // dmesg's stamp is since boot
  EXPECT_NE(e.text.find("Memory cgroup out of memory: Killed process 17914 (python3)"),
            std::string::npos);
  EXPECT_EQ(e.detail, "Memory cgroup out of memory");
}

TEST(KernelLog, RealTorchrunReportNamesTheWorkerNotTheAgent) {
  // The task table lists torchrun and the worker; the kill is the worker's.
  auto events = ParseKernelLog(Read(kDir + "torchrun-oom.dmesg.txt"), 2026);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].pid, 21590);
  EXPECT_EQ(events[0].task, "python3.11");
}

// mm/oom_kill.c dump_oom_summary + __oom_kill_process under Slurm's cgroup
// v2 layout, as journalctl -k prints them (short format: no year).
constexpr const char* kSlurmV2 =
    "Nov 22 23:04:01 node2 kernel: python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), "
    "order=0, oom_score_adj=0\n"
    "Nov 22 23:04:01 node2 kernel: "
    "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/"
    "system.slice/slurmstepd.scope/job_4242,task_memcg=/system.slice/slurmstepd.scope/job_4242/"
    "step_0/user/task_1,task=python3,pid=555,uid=1000\n"
    "Nov 22 23:04:01 node2 kernel: Memory cgroup out of memory: Killed process 555 (python3) "
    "total-vm:1620576kB, anon-rss:783352kB, file-rss:122992kB, shmem-rss:0kB, UID:1000 "
    "pgtables:2344kB oom_score_adj:0\n";

TEST(KernelLog, JournalctlLineCarriesHostTimeAndTaskCgroup) {
  auto events = ParseKernelLog(kSlurmV2, 2026);
  ASSERT_EQ(events.size(), 1u);
  const KernelEvent& e = events[0];
  EXPECT_EQ(e.host, "node2");
  EXPECT_EQ(e.line, 3u);
  ASSERT_TRUE(e.wall_time.has_value());
  EXPECT_DOUBLE_EQ(*e.wall_time, 1795388641.0);  // 2026-11-22T23:04:01Z
  EXPECT_EQ(e.memcg, "/system.slice/slurmstepd.scope/job_4242/step_0/user/task_1");
}

TEST(KernelLog, CgroupDecidesForOrAgainstTheJob) {
  auto events = ParseKernelLog(kSlurmV2, 2026);
  KernelMatchInput in;
  in.job_id = "4242";
  auto ours = MatchKernelEvents(events, in);
  ASSERT_EQ(ours.size(), 1u);
  EXPECT_TRUE(ours[0].matched);
  EXPECT_FALSE(ours[0].weak);
  EXPECT_NE(ours[0].basis.find("job_4242"), std::string::npos);
  // Another job's cgroup is never this job's, whatever else agrees.
  in.job_id = "4243";
  in.pids = {555};
  in.sigkill = true;
  auto theirs = MatchKernelEvents(events, in);
  EXPECT_FALSE(theirs[0].matched);
  EXPECT_NE(theirs[0].basis.find("not this job"), std::string::npos);
}

TEST(KernelLog, OldKernelTaskInLineGivesTheCgroup) {
  // mm/memcontrol.c mem_cgroup_print_oom_info and mm/oom_kill.c up to 4.18.
  auto events = ParseKernelLog(
      "[  512.000001] Task in /slurm/uid_0/job_7/step_0 killed as a result of limit of "
      "/slurm/uid_0/job_7\n"
      "[  512.000002] Memory cgroup out of memory: Kill process 888 (python) score 990 or "
      "sacrifice child\n"
      "[  512.000003] Killed process 888 (python) total-vm:100kB, anon-rss:90kB, file-rss:0kB, "
      "shmem-rss:0kB\n",
      2026);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].pid, 888);
  EXPECT_EQ(events[0].memcg, "/slurm/uid_0/job_7/step_0");
  KernelMatchInput in;
  in.job_id = "7";
  EXPECT_TRUE(MatchKernelEvents(events, in)[0].matched);
}

TEST(KernelLog, TimeWindowAndTaskName) {
  // dmesg -T prefix; torch 2.x names its main thread pt_main_thread.
  auto events = ParseKernelLog(
      "[Sun Nov 22 23:04:01 2026] Out of memory: Killed process 777 (pt_main_thread) "
      "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB "
      "oom_score_adj:0\n"
      "[Sun Nov 22 23:04:02 2026] Out of memory: Killed process 778 (postgres) total-vm:1kB, "
      "anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0\n",
      1970);
  ASSERT_EQ(events.size(), 2u);
  ASSERT_TRUE(events[0].wall_time.has_value());
  KernelMatchInput in;
  in.log_start = *events[0].wall_time - 600;
  in.log_end = *events[0].wall_time + 5;
  auto m = MatchKernelEvents(events, in);
  EXPECT_TRUE(m[0].matched);
  EXPECT_NE(m[0].basis.find("time span"), std::string::npos);
  EXPECT_FALSE(m[1].matched);                  // in the window, but no training process
  in.log_start = *events[0].wall_time + 3600;  // a later job
  in.log_end = *events[0].wall_time + 7200;
  EXPECT_FALSE(MatchKernelEvents(events, in)[0].matched);
}

TEST(KernelLog, NothingToCompareNeedsTheLogsSigkill) {
  auto events = ParseKernelLog(Read(kDir + "srun-oom.dmesg.txt"), 2026);
  KernelMatchInput in;
  EXPECT_FALSE(MatchKernelEvents(events, in)[0].matched);
  in.sigkill = true;
  auto m = MatchKernelEvents(events, in);
  EXPECT_TRUE(m[0].matched);
  EXPECT_TRUE(m[0].weak);
}

TEST(KernelLog, NvidiaXidWithAndWithoutProcess) {
  // kernel_rc.c XID_PRINT_WITH_ATTR, and kern_gpu_error_cont_ga100.c's
  // documented containment line (pid, no name, MIG instance).
  auto events = ParseKernelLog(
      "[ 99.100000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off "
      "the bus.\n"
      "[ 99.200000] NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User "
      "Channel (0x9). RST: No, D-RST: No\n"
      "[ 99.300000] NVRM: Xid (PCI:0000:3b:00): 48, An uncorrectable double bit error (DBE) has "
      "been detected on GPU in the framebuffer at partition 0, subpartition 0.\n",
      2026);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, KernelEventKind::kNvidiaXid);
  EXPECT_EQ(events[0].xid, 79);
  EXPECT_EQ(events[0].device, "PCI:0000:3b:00");
  EXPECT_EQ(events[0].pid, 1234);
  EXPECT_EQ(events[0].task, "python3");
  EXPECT_EQ(events[0].detail, "GPU has fallen off the bus.");
  EXPECT_EQ(events[1].xid, 94);
  EXPECT_EQ(events[1].pid, 7194);
  EXPECT_EQ(events[1].task, "");
  EXPECT_EQ(events[2].xid, 48);
  EXPECT_FALSE(events[2].pid.has_value());
}

TEST(KernelLog, AmdgpuFaultsAndTheirProcess) {
  // gmc_v9_0.c page fault (one-line form) and amdgpu_job.c's ring timeout
  // with its "Process information" line.
  auto events = ParseKernelLog(
      "[ 10.0] amdgpu 0000:03:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 "
      "vmid:1 pasid:32769, for process python3 pid 4321 thread python3 pid 4321)\n"
      "[ 20.0] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled "
      "seq=100, emitted seq=102\n"
      "[ 20.1] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* Process information: process "
      "python3 pid 4322 thread python3 pid 4322\n",
      2026);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, KernelEventKind::kAmdgpu);
  EXPECT_EQ(events[0].device, "0000:03:00.0");
  EXPECT_EQ(events[0].pid, 4321);
  EXPECT_EQ(events[1].pid, 4322);
  EXPECT_NE(events[1].detail.find("ring gfx_0.0.0 timeout"), std::string::npos);
}

TEST(KernelLog, PlainLinesAreNoEvents) {
  EXPECT_TRUE(ParseKernelLog("[ 1.0] Linux version 6.18\n[ 2.0] eth0: link up\n", 2026).empty());
}

TriageReport TriageOom(const std::string& name, std::vector<KernelEvent> events,
                       std::optional<std::string> job_id = std::nullopt) {
  auto facts = SharedScanner().ScanFile(kDir + name + ".log");
  AnalysisContext context;
  context.kernel_events = std::move(events);
  context.job_id = job_id;
  return Analyze(*facts, context);
}

TEST(KernelLog, MatchedOomKillIsTheRootOfTheLogsSigkill) {
  for (const char* name : {"srun-oom", "torchrun-oom"}) {
    SCOPED_TRACE(name);
    auto events = ParseKernelLog(Read(kDir + name + ".dmesg.txt"), 2026);
    TriageReport alone = TriageOom(name, {});
    EXPECT_EQ(alone.primary, "signal-kill");
    TriageReport r = TriageOom(name, events);
    EXPECT_EQ(r.primary, "oom-host");
    EXPECT_EQ(r.status, JobStatus::kFailed);
    ASSERT_EQ(r.kernel.size(), 1u);
    EXPECT_TRUE(r.kernel[0].match.matched);
    EXPECT_NE(r.what_happened.find("signal-kill"), std::string::npos);  // its consequence
    // The status basis names the kill, not only what the log ends in.
    EXPECT_NE(alone.status_basis.find("the log ends in signal-kill"), std::string::npos)
        << alone.status_basis;
    EXPECT_EQ(r.status_basis.find("the log ends in"), std::string::npos) << r.status_basis;
    EXPECT_NE(r.status_basis.find("the kernel's OOM killer killed " + r.kernel[0].event.task),
              std::string::npos)
        << r.status_basis;
    EXPECT_NE(r.status_basis.find("the log's signal-kill is its consequence"), std::string::npos)
        << r.status_basis;
    // The log's side: srun's "task 1: Killed" / torchrun's "exitcode: -9".
    ASSERT_FALSE(r.evidence.empty());
    const std::string& first = r.evidence[0].text;
    EXPECT_TRUE(first.find(": Killed") != std::string::npos ||
                first.find("exitcode: -9") != std::string::npos)
        << first;
  }
  // torchrun names the worker's pid: a strong match; srun does not: weak.
  auto torchrun =
      TriageOom("torchrun-oom", ParseKernelLog(Read(kDir + "torchrun-oom.dmesg.txt"), 2026));
  EXPECT_FALSE(torchrun.kernel[0].match.weak);
  auto srun = TriageOom("srun-oom", ParseKernelLog(Read(kDir + "srun-oom.dmesg.txt"), 2026));
  EXPECT_TRUE(srun.kernel[0].match.weak);
}

TEST(KernelLog, AnotherJobsOomKillChangesNothing) {
  auto events = ParseKernelLog(kSlurmV2, 2026);
  TriageReport r = TriageOom("srun-oom", events, "1");
  EXPECT_EQ(r.primary, "signal-kill");
  ASSERT_EQ(r.kernel.size(), 1u);
  EXPECT_FALSE(r.kernel[0].match.matched);
}

}  // namespace
}  // namespace jobmon::triage
