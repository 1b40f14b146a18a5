#pragma once
// A job's own progress line, learned when no known format (step_lines.h)
// matches: the recurring line template (numbers masked, clocks and rank
// prefixes set aside) whose numbers advance. A template with a counter
// gives positions (the outer and inner counters ordered by how often they
// change: an epoch changes less often than its batch); one that only
// recurs at a steady period (a status or heartbeat line) is the job's
// pulse, weaker evidence, and says so. Pure: fed lines and their times.
// Both the monitor's JobProgress and the triage scanner learn with it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {

// The template of a line: every number is '#', whitespace runs are one
// space, a srun label or torchrun "[defaultN]:"/"[rankN]:" prefix is cut;
// nullopt for a blank line or one of another rank than 0.
struct MaskedLine {
  std::string shape;
  std::vector<double> numbers;      // the numbers as printed, in order
  std::vector<bool> clock;          // part of a time of day or a date ("12:00:01", "2026-11-26")
  std::vector<bool> integer;        // printed without a fraction or exponent
  std::vector<std::string> before;  // the word before each number, lower case ("epoch", "loss")
};
std::optional<MaskedLine> MaskLine(std::string_view line);

enum class LearnedKind { kCounter, kPulse };

class TemplateLearner {
 public:
  // A line that no known format explained, seen at `at` (arrival or the
  // line's own time; seconds).
  void Offer(std::string_view line, double at);
  // Once a template is learned: nullopt before. kCounter wins over kPulse.
  std::optional<LearnedKind> kind() const;
  const std::string& shape() const { return learned_shape_; }
  // Adopt what was learned: Match() then follows that template alone.
  bool Adopt();
  bool adopted() const { return adopted_; }
  // A line of the adopted template: its position (the inner counter as the
  // step, the outer as the epoch, a constant after the counter as its
  // total; a pulse or a fractional counter: the count of forward moves).
  std::optional<StepSample> Match(std::string_view line);
  // The longest literal piece of the adopted template (for a fast search).
  std::string_view anchor() const { return anchor_; }
  // The adopted template's period while it was learned: the longest of its
  // recent gaps (the times given to Offer), nullopt without two gaps.
  std::optional<double> period() const { return period_; }

  static constexpr int kMinRepeats = 4;         // occurrences before a counter counts
  static constexpr int kMinPulseRepeats = 4;    // a pulse: at a steady period
  static constexpr size_t kMaxTemplates = 256;  // bounded, whatever the output
  static constexpr size_t kGapRing = 32;

 private:
  struct Field {
    double last = 0;
    int ups = 0, downs = 0, changes = 0;
    bool clock = false, integer = true;
    std::string before;
  };
  struct Candidate {
    int count = 0;
    std::vector<Field> fields;
    double last_at = 0;
    std::vector<double> gaps;  // ring of the last kGapRing gaps
    size_t next_gap = 0;
  };
  // The counter fields of `c`, highest order first; empty for a pulse.
  std::vector<size_t> Counters(const Candidate& c) const;
  bool Steady(const Candidate& c) const;

  std::unordered_map<std::string, Candidate> candidates_;
  std::string learned_shape_, anchor_;
  std::optional<LearnedKind> kind_;
  bool adopted_ = false;
  std::vector<size_t> counters_;       // of the adopted template
  std::optional<size_t> total_field_;  // a constant after the inner counter
  std::vector<double> last_position_;  // for forward moves of a pulse / fraction
  int64_t moves_ = 0;
  std::optional<double> period_;
  size_t field_count_ = 0;                       // numbers in the adopted template
  bool has_date_ = false, states_time_ = false;  // what Match need look for
  std::vector<double> numbers_;                  // Match's, reused
  std::vector<bool> integer_;
};

}  // namespace jobmon::triage
