#include "scenario.h"

#include <string>

namespace jobmon::fake_trainer {

const char* ToString(Fault fault) {
  switch (fault) {
    case Fault::kNone:
      return "none";
    case Fault::kHang:
      return "hang";
    case Fault::kDie:
      return "die";
    case Fault::kHeartbeatTimeout:
      return "heartbeat-timeout";
    case Fault::kOom:
      return "oom";
    case Fault::kNcclTimeout:
      return "nccl-timeout";
  }
  return "?";
}

Expected<void> Validate(const Scenario& s, int world_size) {
  auto fail = [](const std::string& message) { return Error{message}; };
  if (s.steps < 1) return fail("--steps must be at least 1");
  if (s.step_seconds < 0 || s.compile_seconds < 0 || s.checkpoint_seconds < 0) {
    return fail("durations must not be negative");
  }
  if (s.jitter < 0 || s.jitter >= 1) return fail("--jitter must be in [0, 1)");
  if (s.checkpoint_every < 0) return fail("--checkpoint-every must not be negative");
  if (s.restore_from >= s.steps - 1) return fail("--restore-from must be below steps-1");
  if (s.restore_from >= 0 && !s.Checkpointing()) {
    return fail("--restore-from needs --checkpoint-every (a restore needs checkpointing)");
  }
  if (s.slow_from >= 0 && s.slow_factor <= 0) return fail("--slow-factor must be positive");
  if (s.fault != Fault::kNone && (s.fault_step < s.FirstStep() || s.fault_step >= s.steps)) {
    return fail(std::string("the ") + ToString(s.fault) + " step must be in [" +
                std::to_string(s.FirstStep()) + ", " + std::to_string(s.steps) + ")");
  }
  if (s.fault_signal < 1 || s.fault_signal > 64) return fail("--signal must be 1..64");
  if (world_size < 1) return fail("the world size must be at least 1");
  if (s.fault_rank >= world_size) {
    return fail("--fault-rank " + std::to_string(s.fault_rank) + " is not below the world size " +
                std::to_string(world_size));
  }
  if (s.gpus < 0 || s.gpus > 16) return fail("--gpus must be 0..16");
  if (s.collective_timeout < 0) return fail("--collective-timeout must not be negative");
  if (s.heartbeat_timeout <= 0) return fail("--heartbeat-timeout-seconds must be positive");
  return {};
}

double NominalStepSeconds(const Scenario& s, int64_t step) {
  double seconds = s.step_seconds;
  if (step - s.FirstStep() < 2) seconds *= 1.5;  // warmup
  if (s.slow_from >= 0 && step >= s.slow_from) seconds *= s.slow_factor;
  return seconds;
}

}  // namespace jobmon::fake_trainer
