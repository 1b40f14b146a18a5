#include "trainer.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "gpu_sysfs.h"
#include "jobmon/tfevents/event.h"
#include "peer_sync.h"

namespace jobmon::fake_trainer {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void OnStopSignal(int sig) { g_stop_signal.store(sig); }

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Print(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void PrintAll(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) Print(line);
}

// Sleeps in short slices so that SIGTERM (scancel) is noticed promptly.
bool InterruptibleSleep(double seconds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (g_stop_signal.load() != 0) return false;
    Clock::duration left = end - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(20)));
  }
  return g_stop_signal.load() == 0;
}

[[noreturn]] void DieOf(int sig) {
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a fake crash leaves no core file behind
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);  // for signals whose default action is not to terminate
}

// Keeps the fake GPU files current from a thread of its own, as the driver
// would; the files stop changing when the process dies.
class GpuUpdater {
 public:
  GpuUpdater(FakeAmdGpuTree tree, std::vector<int> ids, double interval, uint64_t seed)
      : tree_(std::move(tree)), ids_(std::move(ids)), interval_(interval), rng_(seed) {
    if (ids_.empty()) {
      for (int gpu = 0; gpu < tree_.gpus(); ++gpu) ids_.push_back(gpu);
    }
    WriteAll();
    thread_ = std::thread([this] { Loop(); });
  }
  ~GpuUpdater() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void SetPhase(GpuPhase phase) {
    {
      std::lock_guard lock(mutex_);
      phase_ = phase;
    }
    wake_.notify_all();
  }

 private:
  void WriteAll() {
    for (int gpu : ids_) {
      if (auto w = tree_.Write(gpu, ReadingFor(phase_, rng_)); !w) {
        std::fprintf(stderr, "[fake-trainer] GPU sysfs: %s\n", w.error().message.c_str());
      }
    }
  }
  void Loop() {
    std::unique_lock lock(mutex_);
    while (!done_) {
      GpuPhase seen = phase_;
      wake_.wait_for(lock, std::chrono::duration<double>(interval_),
                     [&] { return done_ || phase_ != seen; });
      WriteAll();
    }
  }

  FakeAmdGpuTree tree_;
  std::vector<int> ids_;
  double interval_;
  std::mt19937_64 rng_;
  std::mutex mutex_;
  std::condition_variable wake_;
  GpuPhase phase_ = GpuPhase::kIdle;
  bool done_ = false;
  std::thread thread_;
};

class Run {
 public:
  explicit Run(const TrainerOptions& options)
      : o_(options),
        s_(options.scenario),
        rank_(options.rank),
        rng_(s_.seed * 7919 + static_cast<uint64_t>(rank_.rank)),
        start_(Now()) {}

  int Execute();

 private:
  void SetGpu(GpuPhase phase) {
    if (gpu_) gpu_->SetPhase(phase);
  }
  int Finish(int exit_code);
  int HandleFault(int64_t step);
  int WaitOnDeadPeer(int64_t step);
  // Blocks until every rank finished `step` - 1; a result is an exit code.
  std::optional<int> WaitForPeers(int64_t step);
  double Loss(int64_t step);
  double LearningRate(int64_t step) const;
  void WriteEvent(const StepMetrics& m, double lr);

  const TrainerOptions& o_;
  const Scenario& s_;
  const RankInfo& rank_;
  std::mt19937_64 rng_;
  double start_;
  int64_t last_step_ = -1;
  std::unique_ptr<GpuUpdater> gpu_;
  std::unique_ptr<PeerSync> sync_;
  std::optional<tfevents::EventFileWriter> events_;
};

double Run::Loss(int64_t step) {
  std::normal_distribution<double> noise(0.0, 0.02);
  return 2.0 + 8.0 * std::exp(-static_cast<double>(step) / (0.3 * s_.steps + 1)) + noise(rng_);
}

double Run::LearningRate(int64_t step) const {
  const double peak = 3e-4;
  double warmup = std::max<double>(1, 0.1 * s_.steps);
  if (step < warmup) return peak * (step + 1) / warmup;
  double progress = (step - warmup) / std::max(1.0, s_.steps - warmup);
  return peak * (0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * progress)));
}

void Run::WriteEvent(const StepMetrics& m, double lr) {
  if (!events_) return;
  tfevents::ScalarEvent event;
  event.step = m.step;
  event.wall_time = Now();
  // MaxText's scalar tags (what docs/diagnose.md's tb_* catalog is made of).
  const double grad_norm = 0.35 + 0.5 / (1.0 + 0.05 * static_cast<double>(m.step));
  event.scalars = {{"learning/loss", m.loss},
                   {"learning/grad_norm", grad_norm},
                   {"learning/raw_grad_norm", grad_norm * 1.08},
                   {"learning/param_norm", 1950.0 + 0.01 * static_cast<double>(m.step)},
                   {"learning/current_learning_rate", lr},
                   {"learning/total_weights", 8.03e9},
                   {"perf/step_time_seconds", m.seconds},
                   {"perf/per_device_tflops", m.tflops_per_device},
                   {"perf/per_device_tokens_per_sec", m.tokens_per_device_per_sec}};
  if (auto w = events_->Write(event); !w) {
    Print("[fake-trainer] WARNING: TensorBoard write failed: " + w.error().message);
    events_.reset();
  }
}

int Run::Finish(int exit_code) {
  if (exit_code == 0) SetGpu(GpuPhase::kIdle);
  if (exit_code != 0) Print(fmt::format("NODE_EXIT host={} exit={}", rank_.host, exit_code));
  if (rank_.rank == 0)
    PrintAll(JobSummaryLines(rank_, last_step_, s_.steps, Now() - start_, exit_code, Now()));
  gpu_.reset();  // joins the updater after its last write
  return exit_code;
}

// A peer died mid-collective: this rank spins in the all-reduce until NCCL
// gives up.
int Run::WaitOnDeadPeer(int64_t step) {
  SetGpu(GpuPhase::kBusyWait);
  if (!InterruptibleSleep(s_.collective_timeout)) return Finish(128 + g_stop_signal.load());
  PrintAll(NcclTimeoutLines(rank_, step, s_.collective_timeout));
  return Finish(1);
}

std::optional<int> Run::WaitForPeers(int64_t step) {
  const double since = Now();
  bool spinning = false;
  while (!sync_->AllReached(step - 1)) {
    if (!InterruptibleSleep(0.02)) return Finish(128 + g_stop_signal.load());
    const double waited = Now() - since;
    if (!spinning && waited > 0.5) {
      SetGpu(GpuPhase::kBusyWait);  // NCCL spins in the all-reduce
      spinning = true;
    }
    if (rank_.rank == 0) {
      if (auto silent = sync_->SilentPeer(s_.heartbeat_timeout)) {
        PrintAll(HeartbeatCoordinatorLines({*silent}, Now()));
        return Finish(1);
      }
    }
    if (waited > s_.collective_timeout) {
      PrintAll(NcclTimeoutLines(rank_, step, s_.collective_timeout));
      return Finish(1);
    }
  }
  if (spinning) SetGpu(GpuPhase::kTraining);
  return std::nullopt;
}

int Run::HandleFault(int64_t step) {
  const bool fault_rank = rank_.rank == s_.FaultRank(rank_.world_size);
  switch (s_.fault) {
    case Fault::kNone:
      break;
    case Fault::kHang: {
      SetGpu(GpuPhase::kBusyWait);
      // Non-training output keeps the log's mtime fresh, as in real hangs.
      while (InterruptibleSleep(2.0)) {
        Print(AbslPrefix('W', Now(), 77, "topology.cc:212") + "Cannot read CPU core 57");
      }
      return Finish(128 + g_stop_signal.load());
    }
    case Fault::kDie:
      if (fault_rank) DieOf(s_.fault_signal);
      return WaitOnDeadPeer(step);
    case Fault::kOom:
      if (fault_rank) {
        PrintAll(OomLines(getpid(), Now()));
        DieOf(SIGKILL);
      }
      return WaitOnDeadPeer(step);
    case Fault::kNcclTimeout:
      return WaitOnDeadPeer(step);
    case Fault::kHeartbeatTimeout: {
      const int accused = s_.FaultRank(rank_.world_size);
      if (rank_.rank == 0) PrintAll(HeartbeatCoordinatorLines({accused}, Now()));
      if (fault_rank) PrintAll(HeartbeatAccusedLines(rank_.rank, Now()));
      return Finish(1);
    }
  }
  return -1;
}

int Run::Execute() {
  if (rank_.rank == 0) PrintAll(HeaderLines(s_, rank_, start_));
  PrintAll(TaskLines(rank_));
  if (!o_.gpu_sysfs_root.empty()) {
    auto tree = FakeAmdGpuTree::Create(o_.gpu_sysfs_root, s_.gpus);
    if (!tree) {
      Print("[fake-trainer] ERROR: " + tree.error().message);
      return Finish(2);
    }
    gpu_ =
        std::make_unique<GpuUpdater>(std::move(tree.value()), o_.gpu_ids, o_.gpu_interval_seconds,
                                     s_.seed * 104729 + static_cast<uint64_t>(rank_.rank));
  }
  if ((rank_.rank == 0 || o_.tensorboard_every_rank) && !o_.tensorboard_dir.empty()) {
    auto writer = tfevents::EventFileWriter::Create(o_.tensorboard_dir, rank_.host, Now());
    if (!writer) {
      Print("[fake-trainer] WARNING: no TensorBoard events: " + writer.error().message);
    } else {
      events_.emplace(std::move(writer.value()));
      Print("[fake-trainer] TensorBoard events: " + events_->path());
    }
  }
  if (s_.Checkpointing()) {
    if (s_.restore_from >= 0) {
      Print(fmt::format("restoring from this run's directory step {}", s_.restore_from));
    } else {
      Print("No existing checkpoints found, not restoring checkpoint.");
      Print("Saved initial checkpoint at step 0 (starting state)");
    }
  }
  if (!o_.sync_dir.empty()) {
    sync_ = std::make_unique<PeerSync>(o_.sync_dir, rank_.rank, rank_.world_size);
  }
  SetGpu(GpuPhase::kCompiling);
  std::uniform_real_distribution<double> jitter(-s_.jitter, s_.jitter);
  for (int64_t step = s_.FirstStep(); step < s_.steps; ++step) {
    if (s_.fault != Fault::kNone && step == s_.fault_step) return HandleFault(step);
    if (sync_ && step > s_.FirstStep()) {
      if (auto exit_code = WaitForPeers(step)) return *exit_code;
    }
    double seconds = NominalStepSeconds(s_, step) * (1 + jitter(rng_));
    if (step == s_.FirstStep()) {
      if (!InterruptibleSleep(s_.compile_seconds)) return Finish(128 + g_stop_signal.load());
      seconds += s_.compile_seconds;
    }
    SetGpu(GpuPhase::kTraining);
    if (!InterruptibleSleep(seconds - (step == s_.FirstStep() ? s_.compile_seconds : 0))) {
      return Finish(128 + g_stop_signal.load());
    }
    if (s_.Checkpointing() && step > 0 && step % s_.checkpoint_every == 0) {
      SetGpu(GpuPhase::kCheckpoint);
      if (!InterruptibleSleep(s_.checkpoint_seconds)) return Finish(128 + g_stop_signal.load());
      seconds += s_.checkpoint_seconds;
      Print(fmt::format("Saved a checkpoint at step {}.", step));
      SetGpu(GpuPhase::kTraining);
    }
    StepMetrics m;
    m.step = step;
    m.seconds = seconds;
    m.tokens_per_device_per_sec = static_cast<double>(s_.tokens_per_step) / seconds;
    m.tflops_per_device = 450.0 * s_.step_seconds / seconds;
    m.mfu_percent = 100.0 * m.tflops_per_device / 1307.4;
    m.loss = Loss(step);
    Print(StepLine(m));
    WriteEvent(m, LearningRate(step));
    last_step_ = step;
    if (sync_) sync_->Publish(step);
  }
  return Finish(0);
}

}  // namespace

int RunTrainer(const TrainerOptions& options) {
  InstallStopHandlers();
  Run run(options);
  return run.Execute();
}

}  // namespace jobmon::fake_trainer
