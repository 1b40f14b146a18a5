#pragma once
// The failure classes of docs/triage.md, as one
// explicit table in docs/triage.md's priority order, plus the known-harmless
// patterns that never count. A reader finds the rule for any class here.

#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

enum class Category { kInfrastructure, kStageTimeout, kTraining, kJob, kDerived };
const char* ToString(Category category);

// How much a match says about the root of a cascade. The primary class is
// the earliest kRoot match, then (after a hang) the earliest kGeneric one;
// kConsequence matches (a peer's "connection reset" after another rank
// died, the SIGTERM tracebacks of a cancel) are evidence and findings, and
// name the class only when nothing else in the log does.
// kTraceback: a traceback's first line; generic, or a consequence when its
// exception line (kPythonExceptionLine) matches another class (a gloo
// "Connection reset", a SignalException).
enum class Weight { kAsClass, kRoot, kGeneric, kConsequence, kTraceback };
const char* ToString(Weight weight);

// One expression and where its text comes from: project, file, versions.
struct Signature {
  std::string expression;  // Hyperscan (PCRE subset), matched within one line
  std::string source;
  Weight weight = Weight::kAsClass;  // kAsClass: kGeneric for generic classes, else kRoot
};

struct FailureClass {
  std::string id;  // "oom-host"
  Category category;
  std::string stage;  // where it happens ("Docker pull", "Training", ...)
  std::string what;   // one-line explanation for the report
  std::vector<Signature> patterns;
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
// The exception line that ends a Python traceback.
extern const char* const kPythonExceptionLine;
// The JAX/XLA coordination service's heartbeat accusation, each wording
// with its source: the heartbeat-timeout class's first signatures, and what
// the line recogniser calls an accusation (IsHeartbeatAccusation,
// line_facts.h). One list for both.
const std::vector<Signature>& HeartbeatAccusations();

// The weight a match of `signature` of class `c` carries (kAsClass resolved).
Weight WeightOf(const FailureClass& c, const Signature& signature);
// Index in FailureClasses(): lower is higher priority.
size_t PriorityOf(std::string_view id);

// Lines matching any of these are harmless and never count for any class.
const std::vector<std::string>& HarmlessPatterns();

}  // namespace jobmon::triage
