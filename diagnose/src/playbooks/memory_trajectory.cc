#include "playbooks/memory_trajectory.h"

#include <algorithm>

#include "jobmon/triage/step_series.h"

namespace jobmon::diagnose::playbook {
namespace {

// A dip is deeper than half the worst drop; it has recovered once back
// within a quarter of it. A sudden drop carries half the worst drop.
constexpr double kDipFraction = 0.5;
constexpr double kRecoveredFraction = 0.25;
constexpr double kSuddenShare = 0.5;
// Below a tenth of the worst drop is noise, not the episode's start.
constexpr double kOnsetFraction = 0.1;

}  // namespace

const char* ToString(MemoryShape shape) {
  switch (shape) {
    case MemoryShape::kFlat:
      return "flat";
    case MemoryShape::kGradualRamp:
      return "gradual ramp";
    case MemoryShape::kSuddenSpike:
      return "sudden spike";
    case MemoryShape::kCheckpointSpikes:
      return "periodic spikes at checkpoint saves";
  }
  return "flat";
}

MemoryTrajectory ClassifyMemory(const Series& available, const DiagnoseContext& context,
                                double spike_span) {
  MemoryTrajectory out;
  const auto& s = available.samples;
  if (s.size() < 3) return out;
  std::vector<double> first;
  for (size_t i = 0; i < std::min<size_t>(5, s.size()); ++i) first.push_back(s[i].value);
  out.start_available = triage::Percentile(first, 0.5);
  size_t worst = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].value < s[worst].value) worst = i;
  }
  out.min_available = s[worst].value;
  out.peak_time = s[worst].time;
  out.peak_in_checkpoint = context.InCheckpoint(out.peak_time);
  const double drop = out.start_available - out.min_available;
  if (drop <= 0 || out.start_available <= 0) return out;
  out.consumed_fraction = drop / out.start_available;
  auto depth = [&](size_t i) { return out.start_available - s[i].value; };

  // Dips: deeper than kDipFraction of the worst, ended by a recovery.
  bool in_dip = false;
  size_t calm = 0;  // the last sample near the start level
  for (size_t i = 0; i < s.size(); ++i) {
    if (depth(i) <= kOnsetFraction * drop) calm = i;
    if (!in_dip && depth(i) > kDipFraction * drop) {
      in_dip = true;
      const double start = s[std::min(calm + 1, i)].time;
      if (context.InCheckpoint(start) || context.InCheckpoint(s[i].time)) {
        ++out.checkpoint_episodes;
      }
      if (i <= worst) out.onset = start;
    } else if (in_dip && depth(i) < kRecoveredFraction * drop) {
      in_dip = false;
      ++out.recovered_episodes;
    }
  }
  // The largest fall within spike_span seconds.
  double sudden = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t j = i; j-- > 0 && s[i].time - s[j].time <= spike_span;) {
      sudden = std::max(sudden, s[j].value - s[i].value);
    }
  }
  // The deepest dip began or bottomed out in a checkpoint save: the save's
  // D2H copy (docs/diagnose.md, "Checkpointing interference").
  if (out.peak_in_checkpoint || context.InCheckpoint(out.onset)) {
    out.shape = MemoryShape::kCheckpointSpikes;
  } else if (sudden >= kSuddenShare * drop) {
    out.shape = MemoryShape::kSuddenSpike;
  } else {
    out.shape = MemoryShape::kGradualRamp;
  }
  return out;
}

}  // namespace jobmon::diagnose::playbook
