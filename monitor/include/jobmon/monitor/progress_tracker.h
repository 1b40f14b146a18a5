#pragma once
// Per-job progress against expectation (docs/monitor.md, "Progress and incidents"):
// starting (no step yet, startup grace) -> training -> stalled by the one
// stall rule (triage::StallThreshold), with extra grace after a checkpoint
// step and inside an announced phase (evaluation, checkpoint save or load),
// each learned from the job's own earlier ones. The rhythm is the job's
// own: the step time its lines state plus one logging period where they
// state one, else the time between its progress observations. The stall
// clock counts only watched time: after a restart or a log that could not
// be read, nothing is judged until the log was read up to date, and the
// clock starts again from then. A slowdown is the median step time of a
// window of minutes against the run's early steady state, significant only
// when the two barely overlap. Pure: fed with observations and a clock
// value, so it is tested without waiting.

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/triage/stall_rule.h"

namespace jobmon::monitor {

// tgs-degradation: the median step time over the last `window_seconds`
// (at least `min_steps` steps) against the run's early steady state.
struct SlowdownRule {
  double factor = 1.3;
  double window_seconds = 300;
  int min_steps = 30;
};

enum class Phase { kStarting, kTraining, kStalled };
const char* ToString(Phase phase);

struct ProgressState {
  Phase phase = Phase::kStarting;
  std::optional<int64_t> last_step;
  std::optional<double> last_step_time;      // when it was observed (unix seconds)
  double idle_seconds = 0;                   // now - last progress (or - start when starting)
  double threshold_seconds = 0;              // the stall threshold in force now
  std::optional<double> median_interval;     // seconds per step
  std::optional<double> p99_interval;        // between progress observations (the stall bound's)
  std::optional<double> last_activity_time;  // a forward move below the highest step
  bool checkpoint_grace = false;             // the threshold includes checkpoint grace
  std::optional<int64_t> expected_step_now;
  std::string threshold_reason;  // e.g. "5 x p99 1.02s < min_stall 60s"
  // Throughput against the run's own early steady state: the median step
  // time of the baseline (the first steady window after warmup) and of the
  // last window of SlowdownRule::window_seconds.
  std::optional<double> baseline_interval, recent_interval;
  std::optional<double> slowdown;  // recent / baseline, once both exist
  size_t recent_steps = 0, baseline_steps = 0;
  // The two windows barely overlap (the recent lower quartile above the
  // baseline's upper one): a shift, not a noisy node.
  bool slowdown_significant = false;
  // The phase the job announced and has not left (nullopt: none), since when.
  std::optional<triage::PhaseKind> announced_phase;
  std::optional<double> phase_since;
  // Nothing is judged: the log has not been read up to date since a restart
  // or a failed read (the stall clock restarts once it is).
  bool blind = false;
};

class ProgressTracker {
 public:
  ProgressTracker(triage::StallRule rule, double job_start_time, SlowdownRule slowdown = {})
      : rule_(rule), slowdown_(slowdown), start_time_(job_start_time) {}

  // A step finished, observed at `observed_at`; `step_seconds` is the step
  // time the line itself reports (MaxText, Megatron), which is exact where
  // the observation time is only as fine as the poll. Steps at or below the
  // highest seen (other tasks printing the same step) only confirm progress.
  // True when the step was new progress.
  bool OnStep(int64_t step, double observed_at, std::optional<double> step_seconds = {});
  // A progress line's own timing, before the poll's OnStep: the step time
  // it states (or its stamps give) and the gap since the previous stamped
  // progress line (at step `previous_step`). Where lines carry these, they
  // replace the poll's arrival times, which a backlog bunches together.
  void OnLineTiming(int64_t step, std::optional<double> step_seconds,
                    std::optional<double> stamp_gap, std::optional<int64_t> previous_step);
  // The job's rhythm as learned before its first step was followed (a
  // learned progress line's period): the bound until gaps are measured.
  void SetRhythmHint(double seconds) { rhythm_hint_ = seconds; }
  // The job's position moved forward without a new step (a validation bar,
  // a replay after a restart): it is live, and its rhythm counts.
  void OnActivity(double observed_at);
  // "Config param checkpoint_period: N" (or learned from checkpoint lines).
  void SetCheckpointPeriod(int64_t period) { checkpoint_period_ = period; }
  // The job announced a phase (triage/phase_lines.h); it lasts until the
  // next new step, which teaches its length.
  void OnPhase(triage::PhaseKind kind, double observed_at);
  // The phase's own output says it is over (its bar at its total): its
  // length is learned, and the training bound counts again from here.
  void OnPhaseEnd(double observed_at);
  // A line delivered progress that was out of sight this long (a burst of
  // tqdm updates, triage::TqdmBurstSeconds): a gap of the job's rhythm as
  // its own clock measured it, however fast the lines then arrived.
  void OnBurst(double seconds);
  // The log could not be read, or was not read up to date: judge nothing
  // until OnWatched.
  void MarkBlind();
  // The log was read up to date at `now`: the stall clock runs again, from
  // here where it was blind.
  void OnWatched(double now);

  ProgressState Evaluate(double now) const;

  // After a daemon restart: what was persisted (last step and its time, the
  // interval statistics, what was learned about checkpoints).
  void Restore(int64_t last_step, double last_step_time, std::optional<double> median,
               std::optional<double> p99, std::optional<int64_t> checkpoint_period,
               std::optional<double> longest_checkpoint_pause,
               std::optional<double> baseline_interval = {},
               std::optional<double> recent_interval = {}, bool stated_step_times = false);
  bool stated_step_times() const { return stated_step_times_; }
  std::optional<int64_t> checkpoint_period() const { return checkpoint_period_; }
  std::optional<int64_t> last_step() const { return last_step_; }

  std::optional<double> longest_checkpoint_pause() const { return longest_checkpoint_pause_; }

  // Each new step and when it was observed, for the incident's chart: at
  // most kTrailPoints, thinned to every other point when full, so the whole
  // run stays drawn at a coarser grain. Not persisted: after a restart the
  // trail starts at the restored step.
  struct TrailPoint {
    double t = 0;
    int64_t step = 0;
  };
  const std::vector<TrailPoint>& trail() const { return trail_; }
  static constexpr size_t kTrailPoints = 1024;

  static constexpr size_t kWindow = 200;
  static constexpr int64_t kWarmupSteps = 5;
  static constexpr size_t kMaxBaselineSteps = 4096;
  static constexpr size_t kMinGapsForStatedRhythm = 20;

 private:
  bool IsCheckpointStep(int64_t step) const;
  void AddStepSeconds(double seconds, double at);
  void AddObservationGap(double seconds);
  void ClosePhase(double at);
  triage::StallLimit Limit() const;  // the stall bound in force
  double LastProgressTime() const;
  void EvaluateSlowdown(ProgressState& state) const;
  // The windows' percentiles, and the slowdown they show: each computed
  // once after a change to its own window, because Evaluate runs several
  // times a cycle for each of thousands of jobs and each percentile sorts a
  // copy (a new step changes the step times, then its gap the gaps: one
  // cache for all had every figure computed twice per step).
  struct SlowdownFigures {
    std::optional<double> baseline_interval, recent_interval, slowdown;
    bool significant = false;
  };
  struct IntervalFigures {
    std::optional<double> p50, p99;
  };
  const IntervalFigures& Intervals() const;
  std::optional<double> GapP99() const;
  const SlowdownFigures& Slowdown() const;
  SlowdownFigures ComputeSlowdown() const;

  triage::StallRule rule_;
  SlowdownRule slowdown_;
  double start_time_;
  std::optional<int64_t> first_step_, last_step_;
  std::optional<double> last_time_;      // of the last new step
  std::optional<double> last_observed_;  // of the last step or activity
  std::optional<double> last_activity_;
  size_t observations_ = 0;
  std::optional<int64_t> first_timed_step_;
  std::optional<double> first_observed_, longest_warmup_gap_, rhythm_hint_;
  // OnLineTiming gave this poll's step times / gaps.
  bool timed_seconds_ = false, timed_gaps_ = false;
  // The lines state their own step time (a rate, "time per iteration"):
  // the rhythm is that, plus one logging period.
  bool stated_step_times_ = false;
  std::deque<double> intervals_;  // seconds per step, post-warmup, not after checkpoints
  std::deque<double> gaps_;       // between observations, post-warmup, not after checkpoints
  // Step times with when they were seen: the baseline until it spans the
  // slowdown window (and min_steps), then the recent window.
  std::vector<double> baseline_;
  double baseline_seconds_ = 0;
  bool baseline_closed_ = false;
  struct TimedStep {
    double at, seconds;
  };
  std::deque<TimedStep> recent_;
  // Reset by every change to their windows above: intervals_; gaps_;
  // baseline_ and recent_.
  mutable std::optional<IntervalFigures> interval_figures_;
  mutable std::optional<std::optional<double>> gap_p99_;
  mutable std::optional<SlowdownFigures> slowdown_figures_;
  std::optional<double> longest_checkpoint_pause_;
  std::optional<int64_t> checkpoint_period_;
  struct OpenPhase {
    triage::PhaseKind kind;
    double since;
  };
  std::optional<OpenPhase> phase_;
  std::array<std::optional<double>, triage::kPhaseKindCount> longest_phase_{};
  bool phase_gap_ = false;  // the next step ends a phase: its gap is the phase's
  bool blind_ = false;
  bool blind_gap_ = false;  // the next step's gap spans time nobody watched
  std::optional<double> watch_resumed_;
  std::vector<TrailPoint> trail_;
};

}  // namespace jobmon::monitor
