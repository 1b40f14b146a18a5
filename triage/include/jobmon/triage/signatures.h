#pragma once
// The failure classes of ../shared/reference/job-log-triage.md, as one
// explicit table in the reference's priority order, plus the known-harmless
// patterns that never count. A reader finds the rule for any class here.

#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

enum class Category { kInfrastructure, kStageTimeout, kTraining, kJob, kDerived };
const char* ToString(Category category);

struct FailureClass {
  std::string id;  // "oom-host"
  Category category;
  std::string stage;  // where it happens ("Docker pull", "Training", ...)
  std::string what;   // one-line explanation for the report
  // Hyperscan expressions (PCRE subset), matched within one line.
  std::vector<std::string> patterns;
  // Generic classes (a Python traceback, a non-zero exit) are the primary
  // failure only when nothing more specific matched: they are usually the
  // last link of a cascade, not its cause.
  bool generic = false;
  std::vector<std::string> next_steps;
  // The class does not count on a line where one of these also matched
  // (XLA's "RESOURCE_EXHAUSTED: Out of memory ..." is a GPU OOM, not a host one).
  std::vector<std::string> not_with = {};
};

// In priority order: first infrastructure, then stage timeouts, training
// failures, job-level classes, then classes derived from progress (hang,
// unknown-death, tgs-degradation, soft-success) that have no signature.
const std::vector<FailureClass>& FailureClasses();
const FailureClass* FindClass(std::string_view id);
// Index in FailureClasses(): lower is higher priority.
size_t PriorityOf(std::string_view id);

// Lines matching any of these are harmless and never count for any class.
const std::vector<std::string>& HarmlessPatterns();

}  // namespace jobmon::triage
