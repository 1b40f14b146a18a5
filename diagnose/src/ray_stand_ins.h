#pragma once
// Ray's own series standing in for the exporter's (docs/ray.md): a job
// that ran Ray has ray_node_* in its TSDB, and where the exporter's GPU or
// memory families are absent (no exporter on a node, no GPU collector
// there) the playbooks read Ray's instead, relabelled to the exporter's
// shape (label gpu, bytes) so that no playbook knows the difference.

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

struct StandIn {
  std::string_view family;  // the exporter's, as the playbooks ask it
  std::string_view ray;     // the Ray family whose presence it needs
  // PromQL over Ray's series; "{}" stands where a query's selector goes.
  std::string_view expression;
};

// Every stand-in, in one list.
const std::vector<StandIn>& RayStandIns();

// Those whose exporter family is absent from `families` and whose Ray
// family is there.
std::vector<StandIn> StandInsFor(const std::vector<std::string>& families);

// `promql` with each use of a stood-in family (`name`, `name{sel}`,
// `name{sel}[5m]`) replaced by its Ray expression (the range one as a
// subquery); everything else as it was.
std::string RewriteWithStandIns(std::string_view promql, const std::vector<StandIn>& stand_ins);

// A PromSource that asks the stood-in families of Ray.
class StandInPromSource : public PromSource {
 public:
  StandInPromSource(PromSource& inner, std::vector<StandIn> stand_ins)
      : inner_(inner), stand_ins_(std::move(stand_ins)) {}
  Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                           double step_seconds) override {
    return inner_.QueryRange(RewriteWithStandIns(promql, stand_ins_), range, step_seconds);
  }
  Expected<std::vector<Series>> QueryInstant(std::string_view promql, double time) override {
    return inner_.QueryInstant(RewriteWithStandIns(promql, stand_ins_), time);
  }
  Expected<std::vector<std::string>> LabelValues(
      std::string_view label, const std::optional<TimeRange>& range = std::nullopt,
      std::string_view match = {}) override {
    return inner_.LabelValues(label, range, match);
  }
  std::string Describe() const override { return inner_.Describe(); }

 private:
  PromSource& inner_;
  std::vector<StandIn> stand_ins_;
};

}  // namespace jobmon::diagnose
