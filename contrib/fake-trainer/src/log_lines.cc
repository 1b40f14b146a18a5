#include "log_lines.h"

#include <fmt/format.h>

#include <cmath>

namespace jobmon::fake_trainer {

std::string IsoTime(double unix_seconds) {
  time_t whole = static_cast<time_t>(unix_seconds);
  tm utc{};
  gmtime_r(&whole, &utc);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::vector<std::string> HeaderLines(const Scenario& s, const RankInfo& rank, double start) {
  std::string passthrough =
      fmt::format("steps={} per_device_batch_size=2 max_target_length=2048", s.steps);
  if (s.Checkpointing()) passthrough += " enable_checkpointing=true async_checkpointing=false";
  std::vector<std::string> lines = {
      "================ JOB HEADER ================",
      fmt::format("Job start: {}", IsoTime(start)),
      fmt::format("SLURM_JOB_ID={}", rank.job_id),
      fmt::format("NNODES={}", rank.world_size),
      fmt::format("NODE_LIST={}", rank.nodelist),
      "MODEL=fake-llama2-7b",
      "RAY=0",
      fmt::format("PASSTHROUGH_ARGS={}", passthrough),
      fmt::format("JAX_COORDINATOR_ADDRESS={}:12345", rank.host),
      fmt::format("jax_distributed_heartbeat_timeout_seconds={:g}", s.heartbeat_timeout),
      "============================================",
      // A known-harmless probe message that appears in every real job.
      "Failed call to cuInit: UNKNOWN ERROR (303)",
      fmt::format("Config param steps: {}", s.steps),
  };
  if (s.Checkpointing()) {
    lines.push_back(fmt::format("Config param checkpoint_period: {}", s.checkpoint_every));
    lines.push_back("Config param enable_checkpointing: True");
  } else {
    lines.push_back("Config param enable_checkpointing: False");
  }
  lines.push_back(fmt::format("Config param per_device_batch_size: 2"));
  return lines;
}

std::vector<std::string> TaskLines(const RankInfo& rank) {
  return {
      fmt::format("[fake-trainer] task {} on host {} (process {} of {})", rank.rank, rank.host,
                  rank.rank, rank.world_size),
      fmt::format("jax.distributed.initialize: process_id={} num_processes={} host={}", rank.rank,
                  rank.world_size, rank.host),
  };
}

std::string StepLine(const StepMetrics& m) {
  return fmt::format(
      "completed step: {}, seconds: {:.3f}, TFLOP/s/device: {:.3f}, MFU: {:.2f}%, "
      "Tokens/s/device: {:.3f}, loss: {:.3f}",
      m.step, m.seconds, m.tflops_per_device, m.mfu_percent, m.tokens_per_device_per_sec, m.loss);
}

std::vector<std::string> JobSummaryLines(const RankInfo& rank, int64_t last_step, int64_t steps,
                                         double elapsed_seconds, int exit_code, double end) {
  return {
      "================ JOB SUMMARY ================",
      fmt::format("Job ID: {}", rank.job_id),
      fmt::format("Nodes: {} ({})", rank.nodelist, rank.world_size),
      last_step >= 0 ? fmt::format("Last completed step: {} of steps={}", last_step, steps)
                     : fmt::format("Last completed step: none of steps={}", steps),
      fmt::format("Elapsed: {:.1f} s", elapsed_seconds),
      fmt::format("End: {}", IsoTime(end)),
      exit_code == 0 ? std::string("Status: SUCCESS (exit 0)")
                     : fmt::format("Status: FAILED (exit {})", exit_code),
      "=============================================",
  };
}

std::string AbslPrefix(char severity, double unix_seconds, int thread_id, const char* location) {
  time_t whole = static_cast<time_t>(unix_seconds);
  int micros = static_cast<int>((unix_seconds - static_cast<double>(whole)) * 1e6);
  tm utc{};
  gmtime_r(&whole, &utc);
  return fmt::format("{}{:02d}{:02d} {:02d}:{:02d}:{:02d}.{:06d} {} {}] ", severity, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, micros, thread_id, location);
}

std::vector<std::string> HeartbeatCoordinatorLines(const std::vector<int>& accused, double now) {
  std::vector<std::string> lines = {
      AbslPrefix('E', now, 2101, "coordination_service.cc:1254") +
      "Use error polling to propagate the following error to all tasks: UNAVAILABLE: The "
      "following tasks are unhealthy (stopped sending heartbeats):"};
  for (int task : accused) lines.push_back(fmt::format("/job:jax_worker/replica:0/task:{}", task));
  lines.push_back(
      "The tasks have crashed. Check the task logs for an earlier error to debug further.");
  lines.push_back(
      "jax.errors.JaxRuntimeError: UNAVAILABLE: The following tasks are unhealthy (stopped "
      "sending heartbeats):");
  return lines;
}

std::vector<std::string> HeartbeatAccusedLines(int task, double now) {
  return {
      AbslPrefix('E', now, 2205, "coordination_service_agent.cc:332") +
          "Polled error from coordination service (this can be an error from this or another "
          "task).",
      AbslPrefix('F', now, 2205, "client.cc:104") +
          fmt::format("Terminating process because the JAX distributed service detected fatal "
                      "errors. This most likely indicates that another task died; see the other "
                      "task logs for more details. (task {})",
                      task),
  };
}

std::vector<std::string> OomLines(int pid, double now) {
  return {
      AbslPrefix('E', now, 1, "host_memory.cc:88") +
          "Host allocation of 68719476736 bytes failed: Out of memory",
      fmt::format("oom-kill:constraint=CONSTRAINT_NONE,task=python3,pid={}", pid),
      fmt::format("Out of memory: Killed process {} (python3) total-vm:812345678kB", pid),
  };
}

std::vector<std::string> NcclTimeoutLines(const RankInfo& rank, int64_t step, double waited) {
  return {
      fmt::format("{}:{}:{} [0] NCCL WARN Timeout waiting for peer in all-reduce at step {} "
                  "after {:.0f}s",
                  rank.host, 4000 + rank.rank, 4100 + rank.rank, step, std::ceil(waited)),
      fmt::format("{}:{}:{} [0] NCCL INFO ncclSystemError: collective operation timed out",
                  rank.host, 4000 + rank.rank, 4100 + rank.rank),
  };
}

}  // namespace jobmon::fake_trainer
