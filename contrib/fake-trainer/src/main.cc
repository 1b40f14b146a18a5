// fake-trainer: behaves like one rank of a multi-node MaxText job, for the
// dev cluster's tests and demo. Run one task per node under srun.

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "trainer.h"

namespace {

using jobmon::fake_trainer::Fault;
using jobmon::fake_trainer::TrainerOptions;

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// "%n" -> node name, "%t" -> rank, "%j" -> job id: one directory per node
// even when every node shares one filesystem.
std::string ExpandPattern(std::string pattern, const jobmon::fake_trainer::RankInfo& rank) {
  const std::map<std::string, std::string> values = {
      {"%n", rank.host}, {"%t", std::to_string(rank.rank)}, {"%j", rank.job_id}};
  for (const auto& [key, value] : values) {
    for (size_t pos; (pos = pattern.find(key)) != std::string::npos;)
      pattern.replace(pos, 2, value);
  }
  return pattern;
}

int ParseSignal(const std::string& text) {
  static const std::map<std::string, int> names = {
      {"KILL", SIGKILL}, {"TERM", SIGTERM}, {"SEGV", SIGSEGV}, {"ABRT", SIGABRT},
      {"INT", SIGINT},   {"BUS", SIGBUS},   {"FPE", SIGFPE},   {"HUP", SIGHUP}};
  std::string upper;
  for (char c : text)
    upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
  if (auto it = names.find(upper); it != names.end()) return it->second;
  try {
    size_t used = 0;
    int number = std::stoi(text, &used);
    if (used == text.size()) return number;
  } catch (const std::exception&) {
  }
  throw CLI::ValidationError("--signal", "unknown signal '" + text + "'");
}

}  // namespace

int main(int argc, char** argv) {
  TrainerOptions o;
  auto& s = o.scenario;
  CLI::App app{
      "fake-trainer: one rank of a fake multi-node MaxText job (log lines, TensorBoard events, "
      "fake AMD GPU sysfs) with injectable faults."};
  app.get_formatter()->column_width(36);

  app.add_option("--steps", s.steps, "Total steps T (runs steps 0..T-1)")->capture_default_str();
  app.add_option("--step-seconds", s.step_seconds, "Steady-state step time")->capture_default_str();
  app.add_option("--compile-seconds", s.compile_seconds, "Compilation time added to the first step")
      ->capture_default_str();
  app.add_option("--jitter", s.jitter, "Relative step-time noise")->capture_default_str();
  app.add_option("--checkpoint-every", s.checkpoint_every,
                 "Checkpoint period N (enables checkpointing)");
  app.add_option("--checkpoint-seconds", s.checkpoint_seconds, "Time a checkpoint save takes");
  app.add_option("--restore-from", s.restore_from,
                 "Restore from checkpoint step N (first step N+1)");
  app.add_option("--slow-from", s.slow_from, "Steps from N on run slower");
  app.add_option("--slow-factor", s.slow_factor, "How much slower")->capture_default_str();

  int64_t hang_at = -1, die_at = -1, heartbeat_at = -1, oom_at = -1, nccl_at = -1;
  std::string signal_text = "KILL";
  auto* hang = app.add_option("--hang-at", hang_at, "Stop stepping at step N, stay alive and busy");
  auto* die = app.add_option("--die-at", die_at, "The fault rank dies of --signal at step N");
  auto* heartbeat = app.add_option("--heartbeat-timeout-at", heartbeat_at,
                                   "JAX heartbeat false positive at step N, then exit 1");
  auto* oom = app.add_option("--oom-at", oom_at, "The fault rank is OOM-killed at step N");
  auto* nccl = app.add_option("--nccl-timeout-at", nccl_at, "NCCL collective timeout at step N");
  for (auto* a : {hang, die, heartbeat, oom, nccl}) {
    for (auto* b : {hang, die, heartbeat, oom, nccl}) {
      if (a != b) a->excludes(b);
    }
  }
  app.add_option("--signal", signal_text, "Signal for --die-at (name or number)")
      ->capture_default_str();
  app.add_option("--fault-rank", s.fault_rank, "Rank that faults (default: the last rank)");
  app.add_option("--collective-timeout", s.collective_timeout,
                 "Seconds peers wait on a dead rank before an NCCL timeout")
      ->capture_default_str();

  app.add_option("--heartbeat-timeout-seconds", s.heartbeat_timeout,
                 "JAX heartbeat timeout: with --sync-dir, rank 0 accuses a peer silent this long")
      ->capture_default_str();
  app.add_option("--sync-dir", o.sync_dir,
                 "Ranks wait for each other at every step through files here (%j expands), "
                 "and send heartbeats, so a dead rank blocks its peers");

  app.add_option("--gpu-sysfs", o.gpu_sysfs_root,
                 "Keep a fake AMD GPU sysfs tree here (%n node, %t rank, %j job)");
  app.add_option("--gpus", s.gpus, "GPUs in the fake tree")->capture_default_str();
  app.add_option("--gpu-ids", o.gpu_ids,
                 "Drive only these GPUs of the tree (comma-separated, e.g. $SLURM_STEP_GPUS: a "
                 "job on a node shared with another; default all)")
      ->delimiter(',');
  app.add_option("--gpu-interval", o.gpu_interval_seconds, "Seconds between GPU file updates")
      ->capture_default_str();
  app.add_option("--tensorboard-dir", o.tensorboard_dir,
                 "Rank 0 writes TensorBoard events here (%n, %t, %j expand; with %n or %t every "
                 "rank writes its own)");
  app.add_option("--seed", s.seed, "Seed for all noise (deterministic runs)")
      ->capture_default_str();

  o.rank.rank = std::atoi(EnvOr("SLURM_PROCID", "0").c_str());
  o.rank.world_size = std::atoi(EnvOr("SLURM_NTASKS", "1").c_str());
  o.rank.host = EnvOr("SLURMD_NODENAME", Hostname());
  o.rank.job_id = EnvOr("SLURM_JOB_ID", "local");
  o.rank.nodelist = EnvOr("SLURM_JOB_NODELIST", o.rank.host);
  app.add_option("--rank", o.rank.rank, "This rank (default $SLURM_PROCID)");
  app.add_option("--world-size", o.rank.world_size, "Number of ranks (default $SLURM_NTASKS)");
  app.add_option("--host", o.rank.host, "Host name printed (default $SLURMD_NODENAME)");

  CLI11_PARSE(app, argc, argv);

  try {
    s.fault_signal = ParseSignal(signal_text);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  const std::pair<int64_t, Fault> faults[] = {{hang_at, Fault::kHang},
                                              {die_at, Fault::kDie},
                                              {heartbeat_at, Fault::kHeartbeatTimeout},
                                              {oom_at, Fault::kOom},
                                              {nccl_at, Fault::kNcclTimeout}};
  for (const auto& [step, fault] : faults) {
    if (step >= 0) {
      s.fault = fault;
      s.fault_step = step;
    }
  }
  if (auto valid = jobmon::fake_trainer::Validate(s, o.rank.world_size); !valid) {
    std::cerr << "fake-trainer: error: " << valid.error().message << "\n";
    return 2;
  }
  if (o.rank.rank < 0 || o.rank.rank >= o.rank.world_size) {
    std::cerr << "fake-trainer: error: rank " << o.rank.rank << " outside world size "
              << o.rank.world_size << "\n";
    return 2;
  }
  for (int gpu : o.gpu_ids) {
    if (gpu < 0 || gpu >= s.gpus) {
      std::cerr << "fake-trainer: error: --gpu-ids " << gpu << " is not one of the tree's "
                << s.gpus << " GPUs\n";
      return 2;
    }
  }
  o.gpu_sysfs_root = ExpandPattern(o.gpu_sysfs_root, o.rank);
  o.tensorboard_every_rank = o.tensorboard_dir.find("%n") != std::string::npos ||
                             o.tensorboard_dir.find("%t") != std::string::npos;
  o.tensorboard_dir = ExpandPattern(o.tensorboard_dir, o.rank);
  o.sync_dir = ExpandPattern(o.sync_dir, o.rank);
  return jobmon::fake_trainer::RunTrainer(o);
}
