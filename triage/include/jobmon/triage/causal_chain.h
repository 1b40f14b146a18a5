#pragma once
// The causal reading of a log (docs/triage.md, "The causal chain"): what
// happened, as events, and which explains which. The primary is the event
// that explains the others; each rule that lets one event explain another
// is written once, in CauseRules(), and tested on its own.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

// The kinds of event, in the order an engineer weighs them when nothing
// else decides.
enum class EventKind {
  kRootFailure,     // a root signature: where a cascade starts (a config error, a SIGKILL)
  kHang,            // progress stopped (status, the program's own watchdog, the log's clock)
  kPlannedEnd,      // training reached its planned total, then the job failed
  kFailure,         // a generic failure of training (a traceback, an exit status)
  kJobEnd,          // how the job ended, by its banners: stage-fail, node-fail, cancelled
  kSlurmEnd,        // Slurm's word (state, exit code) naming a class
  kConsequence,     // a line that follows from a failure elsewhere (a peer's lost connection)
  kUnexplainedEnd,  // the log stops and nothing says why
  kKernelOomKill,   // the kernel's OOM killer, matched to the job (--kernel-log)
};
std::string_view ToString(EventKind kind);

struct CausalEvent {
  EventKind kind = EventKind::kFailure;
  std::string class_id;  // the failure class it stands for
  std::optional<uint64_t> line;
  std::string rank;            // the rank its line names (rank_progress.h ToString)
  std::string host;            // the host its source names (a journal's host field)
  std::optional<double> time;  // its own timestamp (unix s)
  std::string text;            // the line, or what the event rests on
  // What the rules weigh about the class: generic (a traceback, an exit
  // status, a cancel), and a training class with a root signature of its own.
  bool generic_class = false;
  bool specific_training = false;
  size_t priority = 0;  // the catalogue's order (signatures.h), for one line's ties
  // Step lines the log printed after it: training went on after a failure
  // that it survived (a caught exception, a retried batch, a restart).
  uint64_t step_lines_after = 0;
  bool survived = false;
};
// Step lines after an event that say training went on: one more line can
// still be the step a failing peer's collective was already in.
inline constexpr uint64_t kTrainedOnStepLines = 2;

struct CauseRule {
  std::string_view name;
  std::string_view reads;  // the rule in words, for --explain and the docs
  bool (*explains)(const CausalEvent& cause, const CausalEvent& effect);
  // Most rules weigh events of one fate: both survived, or neither.
  bool across_fates = false;
};
// Every rule, each its own predicate; at most one holds for a pair.
const std::vector<CauseRule>& CauseRules();
bool Holds(const CauseRule& rule, const CausalEvent& cause, const CausalEvent& effect);
// Rule names the reading leaves out: the leave-one-family-out evaluation
// (tests/eval/leave_one_family_out.py) reads the corpus without the rules
// only the held-out family needs.
using RulesLeftOut = std::vector<std::string>;

// The rule by which `cause` explains `effect`, or nullptr.
const CauseRule* ExplainingRule(const CausalEvent& cause, const CausalEvent& effect,
                                const RulesLeftOut& left_out = {});

struct CausalLink {
  size_t effect = 0;            // index into events
  std::optional<size_t> cause;  // nullopt: nothing in the chain explains it
  std::string_view rule;        // the rule's name
};

struct CausalChain {
  std::vector<CausalEvent> events;  // in the order they were weighed
  std::optional<size_t> primary;    // index into events
  std::vector<CausalLink> links;    // one per event but the primary
  // Why no event is the primary although some were seen (the run completed,
  // is still running, or recovered from them); empty otherwise.
  std::string no_primary_because;
};

// Weighs `events` in their order (the log's lines first, then what the
// log's end and Slurm say, the kernel last): the primary is the event that
// explains the one before it explained everything so far; every other
// event is then linked to the primary or to an event the primary explains.
CausalChain ReadChain(std::vector<CausalEvent> events, const RulesLeftOut& left_out = {});

}  // namespace jobmon::triage
