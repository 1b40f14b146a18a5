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

}  // namespace jobmon
