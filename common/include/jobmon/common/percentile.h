#pragma once
// The nearest-rank percentile every component judges by (step times in
// triage and the monitor, power baselines in common/power_judgement.h and
// the playbooks): one definition, so "the median" means the same value on
// every side.

#include <vector>

namespace jobmon {

// The smallest value with at least `fraction` of the values at or below it;
// 0 for no values.
double Percentile(std::vector<double> values, double fraction);

// The other definitions the diagnosis playbooks were tuned with, kept here
// so that every "median" in the code base is one of these, by name. Each is
// 0 for no values.
//
// The upper of the middle two for an even count (nearest-rank takes the
// lower): the playbooks' median of a series (diagnose/src/playbooks/kit.h).
double UpperMedian(std::vector<double> values);
// The median proper, the mean of the middle two for an even count: the
// median absolute deviation behind the power outliers' spread
// (diagnose/src/playbooks/gpu_health.cc).
double MeanMedian(std::vector<double> values);
// The value at index floor(fraction x (count - 1)) of the sorted values:
// a GPU's unthrottled clock (diagnose/src/playbooks/gpu_health.cc).
double FloorIndexPercentile(std::vector<double> values, double fraction);
// The arithmetic mean; 0 for no values.
double Mean(const std::vector<double>& values);

}  // namespace jobmon
