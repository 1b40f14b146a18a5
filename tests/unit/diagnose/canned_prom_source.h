#pragma once
// A PromSource for playbook unit tests: answers PromQL by the first rule
// whose text the query contains, and records every query asked (so a test
// can check that counters were read only through rate()/increase()).

#include <string>
#include <utility>
#include <vector>

#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose::testing {

class CannedPromSource : public PromSource {
 public:
  // Queries containing `fragment` get `series` (range queries: samples inside
  // the range; instant: the last sample at or before the time).
  void Answer(std::string fragment, std::vector<Series> series) {
    rules_.emplace_back(std::move(fragment), std::move(series));
  }
  void Labels(std::string label, std::vector<std::string> values) {
    labels_.emplace_back(std::move(label), std::move(values));
  }
  const std::vector<std::string>& asked() const { return asked_; }
  // The match[] selector of each LabelValues call (empty: none).
  const std::vector<std::string>& label_matches() const { return label_matches_; }

  Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                           double) override {
    asked_.emplace_back(promql);
    std::vector<Series> out;
    for (const auto& s : Find(promql)) {
      Series cut{s.labels, {}};
      for (const auto& sample : s.samples) {
        if (range.Contains(sample.time)) cut.samples.push_back(sample);
      }
      if (!cut.samples.empty()) out.push_back(std::move(cut));
    }
    return out;
  }
  Expected<std::vector<Series>> QueryInstant(std::string_view promql, double time) override {
    asked_.emplace_back(promql);
    std::vector<Series> out;
    for (const auto& s : Find(promql)) {
      const Sample* at = nullptr;
      for (const auto& sample : s.samples) {
        if (sample.time <= time) at = &sample;
      }
      if (at) out.push_back(Series{s.labels, {*at}});
    }
    return out;
  }
  Expected<std::vector<std::string>> LabelValues(std::string_view label,
                                                 const std::optional<TimeRange>&,
                                                 std::string_view match) override {
    label_matches_.emplace_back(match);
    for (const auto& [name, values] : labels_) {
      if (name == label) return values;
    }
    return std::vector<std::string>{};
  }
  std::string Describe() const override { return "canned answers (unit test)"; }

 private:
  std::vector<Series> Find(std::string_view promql) const {
    for (const auto& [fragment, series] : rules_) {
      if (promql.find(fragment) != std::string_view::npos) return series;
    }
    return {};
  }
  std::vector<std::pair<std::string, std::vector<Series>>> rules_;
  std::vector<std::pair<std::string, std::vector<std::string>>> labels_;
  std::vector<std::string> asked_;
  std::vector<std::string> label_matches_;
};

}  // namespace jobmon::diagnose::testing
