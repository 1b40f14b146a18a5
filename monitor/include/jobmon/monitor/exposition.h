#pragma once
// The Prometheus text exposition format, as the monitor reads it when it
// scrapes a job's exporters itself. Pure and defensive: a malformed line is
// counted and skipped, never trusted.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::monitor {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::vector<Sample> samples;
  size_t bad_lines = 0;
};

Exposition ParseExposition(std::string_view text);
// Only the samples named in `names`: other lines are skipped before their
// labels are read (and are not counted as bad). What the monitor does with
// each scrape, which holds far more families than its window keeps.
Exposition ParseExposition(std::string_view text, const std::vector<std::string>& names);

}  // namespace jobmon::monitor
