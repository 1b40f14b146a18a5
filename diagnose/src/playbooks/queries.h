#pragma once
// What every playbook asks through: queries that record their failures in
// the result (a failed query leaves the verdict partial, not wrong), and
// whether a family is worth asking for.

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose::playbook {

class Queries {
 public:
  Queries(PromSource& source, PlaybookResult& result) : source_(source), result_(result) {}
  // Empty on failure (the error goes to result.errors).
  std::vector<Series> Range(const std::string& promql, const TimeRange& range, double step);
  std::vector<Series> Instant(const std::string& promql, double time);

 private:
  PromSource& source_;
  PlaybookResult& result_;
};

// Whether to ask for a family: discovery found it, or discovery is unknown.
bool Wanted(const DiagnoseContext& context, std::string_view family);

}  // namespace jobmon::diagnose::playbook
