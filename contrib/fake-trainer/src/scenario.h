#pragma once
// What one fake-trainer run does: step timing, checkpoints, and at most one
// fault. Pure data plus validation; every rank of a job gets the same
// scenario and derives its own behaviour from its rank.

#include <cstdint>
#include <optional>
#include <string>

#include "jobmon/common/expected.h"

namespace jobmon::fake_trainer {

enum class Fault { kNone, kHang, kDie, kHeartbeatTimeout, kOom, kNcclTimeout };
const char* ToString(Fault fault);

struct Scenario {
  int64_t steps = 30;            // steps=T: steps 0..T-1
  double step_seconds = 0.2;     // steady-state step time
  double compile_seconds = 0;    // added to the first step, as XLA compilation is
  double jitter = 0.03;          // relative step-time noise
  int64_t checkpoint_every = 0;  // 0: checkpointing off
  double checkpoint_seconds = 0;
  int64_t restore_from = -1;  // restore from this checkpoint step; first step is N+1
  int64_t slow_from = -1;
  double slow_factor = 2.0;
  Fault fault = Fault::kNone;
  int64_t fault_step = -1;         // the step during which the fault happens
  int fault_signal = 9;            // --die-at: the signal the fault rank dies of
  int fault_rank = -1;             // -1: the last rank
  double collective_timeout = 5;   // how long peers wait on a dead rank before an NCCL timeout
  double heartbeat_timeout = 100;  // JAX coordination: rank 0 accuses a peer silent this long
  uint64_t seed = 1;
  int gpus = 2;
  int64_t tokens_per_step = 16384;

  int64_t FirstStep() const { return restore_from >= 0 ? restore_from + 1 : 0; }
  bool Checkpointing() const { return checkpoint_every > 0; }
  int FaultRank(int world_size) const { return fault_rank >= 0 ? fault_rank : world_size - 1; }
};

// Checks ranges and combinations; the message names the offending option.
Expected<void> Validate(const Scenario& scenario, int world_size);

// Step time before noise: warmup steps (the first two) run slower, slow_from
// onwards runs slow_factor times slower; checkpoint cost is added separately.
double NominalStepSeconds(const Scenario& scenario, int64_t step);

}  // namespace jobmon::fake_trainer
