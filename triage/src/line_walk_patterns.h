#pragma once
// Patterns the scan reads as it walks a chunk's lines, in place of
// Hyperscan (scan_patterns.h PatternDef::at_line_start, ::confirm,
// ::carried_test). Each is exactly its expression as the database would
// match it (multiline, on one line given with its newline);
// scan_patterns_test.cc holds each to its expression on the fixture corpus.
// Private to the scanner.
//
// Why: an expression that starts with `^(\d+: )?` is tried by Hyperscan at
// every line start, and four such stamps were a third of its time on a
// training log; a step keyword's `[ \t:=#]{1,3}\d` tail was another sixth
// (tests/bench/triage_bench.py). Here each costs a few byte compares.

#include <string_view>

namespace jobmon::triage {

// A test of one line (with its newline, where it has one).
using LineTest = bool (*)(std::string_view line);

// A line's start as an expression's `^(\d+: )?` reads it: from the line's
// first byte, or after its srun label where it has one (found once a line,
// for every test).
struct LineStart {
  explicit LineStart(std::string_view line);
  std::string_view line;
  std::string_view after_label;  // empty without a label
  // False where no LineStartTest below can accept the line: neither the
  // line nor the text after its label starts with [IWEF[\x1b] or two digits
  // (the first bytes of every stamp below). Most lines are none, and the
  // walk then asks no test (scan_patterns_test.cc holds the tests, asked
  // only where this is true, to their expressions).
  bool stamp_possible = false;
};
using LineStartTest = bool (*)(const LineStart& start);

// ^(\d+: )?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}   (absl's "I1120 10:00:05.000000 ")
bool AbslStampStartsLine(const LineStart& start);
// ^(\d+: )?(\x1b\[[0-9;]{1,6}m)?\[\d\d/\d\d \d\d:\d\d:\d\d[ \]]   (detectron2's "[11/20 10:00:05 ")
bool BracketStampStartsLine(const LineStart& start);
// ^(\d+: )?1[5-9]\d{8}(\.\d+)?\b   (unix seconds first on the line)
bool EpochSecondsStartLine(const LineStart& start);
// ^(\d+: )?\[?\d\d:\d\d:\d\d([.,]\d{1,6})?\]?\s   (a time of day first on the line)
bool ClockStartsLine(const LineStart& start);

// \d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d anywhere on the line (an ISO date and
// time): no literal leads it, and Hyperscan tried it at every byte (a tenth
// of its time on a training log); here memchr finds each '-' and a few
// compares read around it.
bool IsoStampInLine(std::string_view line);

// (step|iteration|iter)[ \t:=#]{1,3}\d, caseless, anywhere on the line: the
// generic step prefilter, confirmed on a line its keyword part matched.
bool GenericStepKeyword(std::string_view line);

// A test of one line at one match of another pattern: `end` is just past
// that match (scan_patterns.h PatternDef::carried_test).
using CarriedTest = bool (*)(std::string_view line, size_t end);

// Step prefilters read where the generic prefilter's keyword part matched
// (PatternDef::carrier): each holds one of its matches ("step:", "step=",
// "iteration "), and each is true where some such match ends its own text
// as below (on a training log Hyperscan spent a fifth of its time matching
// them on every step line again).
// completed step: \d   ("step:" ends at `end`)
bool MaxTextStepAt(std::string_view line, size_t end);
// iteration[ \t]+\d+/[ \t]*\d+[ \t]*\|   ("iteration" and a blank end at `end`)
bool MegatronIterationAt(std::string_view line, size_t end);
// step:[ \t]+\d+[ \t]+(\x1b\[\d+m)?loss:   ("step:" ends at `end`)
bool TorchTitanStepAt(std::string_view line, size_t end);
// step=\d+, skipped=   ("step=" ends at `end`)
bool DeepSpeedSkippedAt(std::string_view line, size_t end);

}  // namespace jobmon::triage
