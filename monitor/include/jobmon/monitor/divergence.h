#pragma once
// Which host left training first, from the per-host evidence alone: where
// only rank 0 prints steps, the log cannot say which rank stopped, but each
// host's evidence dates when it stopped looking like training. For each
// host, the first of: its exporter went silent (its last successful
// scrape), a GPU's power fell below half the host's training baseline
// (power::kIdleFraction, common/power_judgement.h) or its
// utilisation to idle, one of the job's processes went into D state. Pure
// over the window.

#include <optional>
#include <string>
#include <vector>

#include "jobmon/monitor/metric_window.h"

namespace jobmon::monitor {

struct HostDivergence {
  std::string host;
  double at = 0;    // unix seconds
  std::string how;  // "GPU 0 at 120 W, under half its training 410 W"
};

// Hosts that diverged after `training_until` (the last progress) minus a
// scrape's slack and by `at`, earliest first; hosts still training are
// left out. `stale_after`: an exporter unseen this long is silent.
std::vector<HostDivergence> FirstDivergence(const MetricWindow& window, double training_from,
                                            double training_until, double at, double stale_after);

// One evidence line, or "" when it tells nothing apart (no host diverged,
// or all within `same_moment` seconds with none still training):
// "first divergence: node2 at 10:02:13 UTC (exporter silent), 14 s before
// node1 (GPU 0 at 120 W, ...); node3 still training".
std::string DescribeDivergence(const std::vector<HostDivergence>& diverged, size_t hosts,
                               double same_moment = 10);

}  // namespace jobmon::monitor
