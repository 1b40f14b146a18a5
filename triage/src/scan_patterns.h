#pragma once
// The scanner's pattern list: every failure-class signature, harmless
// pattern, step-line prefilter and fact pattern, compiled into one
// Hyperscan database. Private to the scanner.

#include <string>
#include <vector>

#include "jobmon/triage/signatures.h"
#include "line_fact_patterns.h"
#include "line_walk_patterns.h"

namespace jobmon::triage {

enum class Kind { kClass, kHarmless, kStep, kFact };
inline constexpr size_t kKindCount = 4;

struct PatternDef {
  std::string expression;
  unsigned flags;
  Kind kind;
  int arg;                           // class index, StepProfile, or Fact (line_fact_patterns.h)
  Weight weight = Weight::kAsClass;  // classes: resolved, never kAsClass
  std::string source = {};           // classes: where the text comes from
  // Given, Hyperscan matches these instead of `expression`, its
  // alternatives written apart, all under the pattern's id: a line is
  // matched by the pattern if by any part, and reported once (with
  // `confirm`, a looser form; with `at_line_start`, the other alternatives).
  std::vector<std::string> parts = {};
  // Given, a line this accepts is matched too (the expression's line-start
  // alternatives, read as the scan state walks the lines); only the parts,
  // if any, are compiled.
  LineStartTest at_line_start = nullptr;
  // Given, nothing is compiled: the scan's walk asks this of every line
  // (with its newline), for an expression no literal leads.
  LineTest on_every_line = nullptr;
  // Given, Hyperscan matches the looser `parts`, and a line they match is
  // the pattern's only where this accepts it: asked by the scan state where
  // the answer counts (scan_state.cc).
  LineTest confirm = nullptr;
  // Given, with `carrier` (another pattern's id: some match of its parts
  // lies within each match of this pattern, and ends with one of the bytes
  // of `carried_after`): nothing of this pattern is compiled, and a line is
  // this pattern's where this test accepts it at such a match of the
  // carrier (chunk_reading.cc). Compiled as usual when the carrier is left
  // out of a scan.
  CarriedTest carried_test = nullptr;
  std::string carried_after = {};
  int carrier = -1;
};

// In database order: a pattern's id is its index.
std::vector<PatternDef> AllPatterns();
const char* KindName(Kind kind);

}  // namespace jobmon::triage
