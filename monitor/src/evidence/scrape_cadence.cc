#include "jobmon/monitor/scrape_cadence.h"

#include <cmath>

namespace jobmon::monitor {

ScrapeCadence CadenceOf(const ProgressState& state, const ScrapeNeed& need) {
  auto full = [](const char* why) { return ScrapeCadence{true, true, why}; };
  if (need.heartbeat_pending) return full("accused");
  if (need.incident_open) return full("incident");
  // Its progress is the scraped step: a sparse one would look like a stall.
  if (need.tensorboard_progress) return full("tensorboard");
  if (state.phase == Phase::kStalled) return full("stalled");
  // Before a first step a stall is hang/startup, judged without the window.
  if (state.phase != Phase::kTraining) return {};
  // A quarter of the way to a stall verdict: the stall's later half (power
  // flatness, the hosts' state) is then sampled at every cycle.
  if (state.threshold_seconds > 0 && state.idle_seconds >= state.threshold_seconds / 4)
    return full("late");
  // A hang can come minutes into training: the baseline is learned first.
  if (!need.power_baseline) return {true, false, "learning"};
  return {};
}

bool ScrapeDue(bool every_cycle, std::optional<double> last_scraped, double healthy_interval,
               double now, double phase) {
  if (every_cycle || !last_scraped || healthy_interval <= 0) return true;
  auto slot = [&](double t) { return std::floor(t / healthy_interval + phase); };
  return slot(now) != slot(*last_scraped);
}

double HealthyPhase(uint32_t job_id) {
  // The golden ratio's fraction: consecutive ids land far apart.
  const double x = static_cast<double>(job_id) * 0.6180339887498949;
  return x - std::floor(x);
}

}  // namespace jobmon::monitor
