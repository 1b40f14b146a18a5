#pragma once
// Building canned series for the diagnose unit tests: a value per time on a
// regular grid, one host (and GPU or collector) per series.

#include <functional>
#include <string>

#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose::testing {

// Samples every `every` seconds in [start, end], `value(t)`; times where
// `skip(t)` holds have no sample.
inline Series Grid(Labels labels, double start, double end, double every,
                   const std::function<double(double)>& value,
                   const std::function<bool(double)>& skip = nullptr) {
  Series s{std::move(labels), {}};
  for (double t = start; t <= end; t += every) {
    if (!skip || !skip(t)) s.samples.push_back({t, value(t)});
  }
  return s;
}

}  // namespace jobmon::diagnose::testing
