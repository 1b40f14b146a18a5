#pragma once
// The scanner's pattern list: every failure-class signature, harmless
// pattern, step-line prefilter and fact pattern, compiled into one
// Hyperscan database. Private to the scanner.

#include <string>
#include <vector>

#include "jobmon/triage/signatures.h"
#include "line_fact_patterns.h"

namespace jobmon::triage {

enum class Kind { kClass, kHarmless, kStep, kFact };

struct PatternDef {
  std::string expression;
  unsigned flags;
  Kind kind;
  int arg;                           // class index, StepProfile, or Fact (line_fact_patterns.h)
  Weight weight = Weight::kAsClass;  // classes: resolved, never kAsClass
  std::string source = {};           // classes: where the text comes from
  // Given, Hyperscan matches these instead of `expression`, its
  // alternatives written apart, all under the pattern's id: a line is
  // matched by the pattern if by any part, and reported once.
  std::vector<std::string> parts = {};
};

// In database order: a pattern's id is its index.
std::vector<PatternDef> AllPatterns();
const char* KindName(Kind kind);

}  // namespace jobmon::triage
