// Where each failure class struck in the log: its lines by weight, the
// step lines printed after them, the earliest and the root failure.

#include "analysis.h"

namespace jobmon::triage::analysis {

namespace {

// The earliest class whose `weight` of signature matched and that
// `predicate` accepts (ties by priority). What follows Slurm's cancel
// banner is teardown: only a consequence may come from there.
// With `survivors_of` a profile, lines training went on after (causal_chain.h
// kTrainedOnStepLines step lines of it) do not count: they were survived.
template <typename Predicate>
std::pair<std::string, std::optional<uint64_t>> EarliestOf(
    const ScanFacts& facts, Weight weight, Predicate&& predicate,
    std::optional<StepProfile> survivors_of = std::nullopt) {
  std::optional<uint64_t> end_line;
  if (facts.slurm_end) end_line = facts.slurm_end->line;
  std::string best;
  std::optional<uint64_t> best_line;
  for (const auto& [id, hits] : facts.classes) {
    const FailureClass* c = FindClass(id);
    if (!c || c->category == Category::kDerived || !predicate(*c)) continue;
    std::optional<uint64_t> line = LinesOf(hits, weight).first;
    if (!line || (weight != Weight::kConsequence && end_line && *line > *end_line)) continue;
    if (survivors_of) {
      // The first line unless it was survived, then the last unless that was.
      line = FatalLineOf(facts, hits, weight, *survivors_of).line;
      if (!line || (weight != Weight::kConsequence && end_line && *line > *end_line)) continue;
    }
    if (best.empty() || *line < *best_line ||
        (*line == *best_line && PriorityOf(id) < PriorityOf(best))) {
      best = id;
      best_line = line;
    }
  }
  return {best, best_line};
}

bool AnyClass(const FailureClass&) { return true; }

}  // namespace

bool IsTrainingClass(const FailureClass& c) { return c.category == Category::kTraining; }

bool IsGenericTrainingClass(const FailureClass& c) {
  return c.generic && c.category == Category::kTraining;
}

WeightLines LinesOf(const ClassHits& h, Weight weight) {
  if (weight == Weight::kRoot)
    return {h.first_root, h.last_root, h.steps_at_root, h.steps_at_last_root};
  if (weight == Weight::kGeneric)
    return {h.first_generic, h.last_generic, h.steps_at_generic, h.steps_at_last_generic};
  return {h.first_consequence, h.last_consequence, h.steps_at_consequence,
          h.steps_at_last_consequence};
}

FatalLine FatalLineOf(const ScanFacts& facts, const ClassHits& hits, Weight weight,
                      StepProfile profile) {
  const size_t p = static_cast<size_t>(profile);
  const WeightLines lines = LinesOf(hits, weight);
  const uint64_t after_first = facts.steps[p].count() - lines.at_first[p];
  const uint64_t after_last = facts.steps[p].count() - lines.at_last[p];
  if (!lines.first) return {};
  if (after_first < kTrainedOnStepLines) return {lines.first, after_first, after_first};
  if (lines.last && *lines.last != *lines.first && after_last < kTrainedOnStepLines)
    return {lines.last, after_last, after_first};
  return {std::nullopt, 0, after_first};
}

// The step lines of `profile` printed after a class's line `line` (from the
// counts taken when it was read); nullopt when the line is none of its
// first or last lines.
std::optional<uint64_t> StepLinesAfter(const ScanFacts& facts, const std::string& id, uint64_t line,
                                       StepProfile profile) {
  auto it = facts.classes.find(id);
  if (it == facts.classes.end()) return std::nullopt;
  const size_t p = static_cast<size_t>(profile);
  for (Weight weight : {Weight::kRoot, Weight::kGeneric, Weight::kConsequence}) {
    const WeightLines lines = LinesOf(it->second, weight);
    if (lines.first == line) return facts.steps[p].count() - lines.at_first[p];
    if (lines.last == line) return facts.steps[p].count() - lines.at_last[p];
  }
  return std::nullopt;
}

// The log's own root failure for the status decision, in the order the
// primary is chosen in Analyze: the earliest root signature, else the
// earliest generic training one, else a job-level class, else the earliest
// consequence.
std::pair<std::string, uint64_t> LogRootFailure(const ScanFacts& facts, StepProfile profile) {
  // A failure training went on after was survived: the one it did not is the root.
  auto root = EarliestOf(facts, Weight::kRoot, AnyClass, profile);
  if (root.first.empty()) root = EarliestOf(facts, Weight::kGeneric, IsTrainingClass, profile);
  if (root.first.empty()) root = EarliestOf(facts, Weight::kRoot, AnyClass);
  if (root.first.empty()) root = EarliestOf(facts, Weight::kGeneric, IsTrainingClass);
  for (const char* job_level : {"stage-fail", "node-fail", "cancelled"}) {
    if (auto it = facts.classes.find(job_level); root.first.empty() && it != facts.classes.end())
      root = {job_level, it->second.first.line};
  }
  if (root.first.empty()) root = EarliestOf(facts, Weight::kConsequence, AnyClass);
  return {root.first, root.second.value_or(0)};
}

// The primary's line time when that line is kept (first, last, examples;
// the heartbeat accusation) and stamped, else the log's last timestamp.
std::optional<double> FailureTime(const ScanFacts& facts, const std::string& primary,
                                  std::optional<uint64_t> primary_line) {
  std::vector<const LineRef*> refs;
  if (auto it = facts.classes.find(primary); it != facts.classes.end()) {
    if (!primary_line) primary_line = it->second.first.line;
    refs.push_back(&it->second.first);
    for (const LineRef& ref : it->second.examples) refs.push_back(&ref);
    refs.push_back(&it->second.last);
  }
  if (primary == "heartbeat-timeout" && facts.heartbeat) {
    if (!primary_line) primary_line = facts.heartbeat->line;
    refs.push_back(&*facts.heartbeat);
  }
  for (const LineRef* ref : refs) {
    if (!primary_line || ref->line != *primary_line) continue;
    if (auto t = LineTime(ref->text, facts.timestamp_year)) return t;
  }
  return facts.last_timestamp;
}

// The log's line `line` of class `id` where the scan kept it (first, last,
// examples), for its text, rank and time.
const LineRef* KeptLine(const ScanFacts& facts, const std::string& id, uint64_t line) {
  auto it = facts.classes.find(id);
  if (it == facts.classes.end()) return nullptr;
  const ClassHits& hits = it->second;
  if (hits.first.line == line) return &hits.first;
  for (const LineRef& ref : hits.examples) {
    if (ref.line == line) return &ref;
  }
  return hits.last.line == line ? &hits.last : nullptr;
}

}  // namespace jobmon::triage::analysis
