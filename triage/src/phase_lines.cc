#include "jobmon/triage/phase_lines.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace jobmon::triage {
namespace {

// Lines long enough to be a tqdm bar's redraws are read by their end only.
constexpr size_t kMaxPhaseLine = 512;

// A line (callers cut it to kMaxPhaseLine) lower-cased once, then searched
// for lower-case keywords with the library's vectorised search: a
// case-folding search per keyword was a tenth of a large log's scan.
class FoldedLine {
 public:
  explicit FoldedLine(std::string_view line) : size_(std::min(line.size(), folded_.size())) {
    // The bound and the pointers in locals: a char store may alias the
    // member, which the loop re-read at every byte, unvectorised (perf).
    const size_t n = size_;
    const char* from = line.data();
    char* to = folded_.data();
    for (size_t i = 0; i < n; ++i) {
      const char c = from[i];
      to[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  template <size_t N>
  bool HasAny(const std::array<std::string_view, N>& keywords) const {
    const std::string_view lower(folded_.data(), size_);
    return std::any_of(keywords.begin(), keywords.end(),
                       [&](std::string_view k) { return lower.find(k) != lower.npos; });
  }

 private:
  std::array<char, kMaxPhaseLine> folded_;
  size_t size_;
};

// A cheap gate before the expressions, on every line a job prints that is
// not a step: every phase wording holds one of these.
constexpr std::array<std::string_view, 9> kPhaseKeywords = {
    "eval", "valid", "checkpoint", "ckpt", "sav", "load", "restor", "resum", "dataset"};

// Every wording of a save, announced or done, holds one of these verbs
// (SaveAnnouncement's and CheckpointSaveOf's expressions): a line with none
// is no save, without running them.
constexpr std::array<std::string_view, 6> kSaveVerbs = {"sav",  "writ",    "wrote",
                                                        "stor", "persist", "stag"};

const RE2::Options& Caseless() {
  static const RE2::Options options = [] {
    RE2::Options o;
    o.set_case_sensitive(false);
    o.set_log_errors(false);
    return o;
  }();
  return options;
}

struct PhasePattern {
  PhaseKind kind;
  const RE2* re;
};

// Checkpoint save: HF Trainer's "Saving model checkpoint to", Megatron's
// "saving checkpoint at iteration", DeepSpeed's "Checkpoint <tag> is about
// to be saved!", torchtitan's "Saving the checkpoint", orbax/MaxText's
// "Saving checkpoint for step".
const RE2& SaveAnnouncement() {
  static const RE2 save(
      R"(\b(?:saving|writing|storing|persisting|staging)\b.{0,48}\b(?:checkpoints?|ckpts?|model|state[ _]dict|weights)\b|)"
      R"(\b(?:checkpoints?|ckpt)\b.{0,80}\babout to be saved\b)",
      Caseless());
  return save;
}

const std::array<PhasePattern, 4>& Patterns() {
  const RE2::Options& options = Caseless();
  // Evaluation: HF Trainer's "***** Running Evaluation *****", fairseq's
  // 'begin validation on "valid" subset', Megatron's "Evaluating iter",
  // Lightning's "Validation DataLoader 0:" and "Sanity Checking" bars.
  static const RE2 evaluation(
      R"(\b(?:running|run|start(?:ing|s)?|begin(?:ning|s)?|do(?:ing)?|perform(?:ing)?)\s+)"
      R"((?:the\s+|an?\s+)?(?:evaluation|validation|eval|valid)\b|\bevaluating\b|\bvalidating\b|)"
      R"(\b(?:validation|sanity checking)(?:\s+dataloader\s+\d+)?\s*:|)"
      R"(\b(?:evaluation|validation|eval)\s+(?:start(?:ed|s|ing)?|begin(?:s|ning)?)\b)",
      options);
  // Checkpoint load: HF Trainer's "Loading model from <checkpoint>",
  // Megatron's "loading checkpoint from", "resuming from checkpoint",
  // Lightning's "Restoring states from the checkpoint path".
  static const RE2 load(
      R"(\b(?:loading|restoring|resuming|reloading)\b.{0,48}\b(?:checkpoints?|ckpts?|model|states?|weights)\b|)"
      R"(\bresum(?:e|ing)\s+(?:training\s+)?from\b)",
      options);
  // A data loader (re)started: Megatron's "> building train, validation,
  // and test datasets ...", "Building dataloader", "creating data loaders".
  static const RE2 loader(
      R"(\b(?:building|creating|initializing|initialising|(?:re)?starting|re-?creating)\b.{0,48})"
      R"(\b(?:data ?loaders?|datasets?|data iterators?)\b)",
      options);
  static const std::array<PhasePattern, 4> patterns = {
      PhasePattern{PhaseKind::kCheckpointSave, &SaveAnnouncement()},
      PhasePattern{PhaseKind::kCheckpointLoad, &load},
      PhasePattern{PhaseKind::kEvaluation, &evaluation},
      PhasePattern{PhaseKind::kDataLoader, &loader},
  };
  return patterns;
}

}  // namespace

bool PhaseEnded(std::string_view line) {
  if (line.size() > kMaxPhaseLine) line = line.substr(line.size() - kMaxPhaseLine);
  if (!FoldedLine(line).HasAny(kPhaseKeywords)) return false;
  const RE2::Options& options = Caseless();
  static const RE2 ended(
      R"(\b(?:saved|wrote|written|stored)\b.{0,48}\b(?:checkpoints?|ckpts?|model|state[ _]dict|weights)\b|)"
      R"(\b(?:checkpoints?|ckpts?)\b.{0,80}\b(?:saved|written|stored|complete[d]?|done)\b|)"
      R"(\bloaded\b.{0,48}\b(?:checkpoints?|ckpts?|model|states?|weights)\b|)"
      R"(\bfinished\s+(?:saving|loading|evaluation|evaluating|validation|validating)\b|)"
      R"(\b(?:evaluation|validation|eval)\s+(?:done|finished|complete[d]?|ended)\b)",
      options);
  return RE2::PartialMatch(line, ended);
}

CheckpointSave CheckpointSaveOf(std::string_view line) {
  if (line.size() > kMaxPhaseLine) line = line.substr(line.size() - kMaxPhaseLine);
  const FoldedLine folded(line);
  // The verbs first: fewer lines hold one ("no checkpoint due" holds a keyword only).
  if (!folded.HasAny(kSaveVerbs) || !folded.HasAny(kPhaseKeywords)) return CheckpointSave::kNone;
  static const RE2 saved(
      R"(\b(?:saved|wrote|written|stored)\b.{0,48}\b(?:checkpoints?|ckpts?|model|state[ _]dict|weights)\b|)"
      R"(\b(?:checkpoints?|ckpts?)\b.{0,80}\b(?:saved|written|stored)\b|)"
      R"(\bfinished\s+saving\b)",
      Caseless());
  // Announcements first: "Checkpoint <tag> is about to be saved!" holds "saved".
  // (AnnouncedPhase tries it first, so its answer is AnnouncedPhase's.)
  if (RE2::PartialMatch(line, SaveAnnouncement())) return CheckpointSave::kAnnounced;
  if (RE2::PartialMatch(line, saved)) return CheckpointSave::kDone;
  return CheckpointSave::kNone;
}

bool PhaseBarDone(std::string_view line) {
  // tqdm redraws with '\r': the last update is the bar as it stands.
  if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
  static const RE2 count(R"((\d+)/(\d+)\s*\[)");
  int64_t done = 0, total = 0;
  return RE2::PartialMatch(line, count, &done, &total) && total > 0 && done == total;
}

std::optional<PhaseKind> AnnouncedPhase(std::string_view line) {
  if (line.size() > kMaxPhaseLine) line = line.substr(line.size() - kMaxPhaseLine);
  if (!FoldedLine(line).HasAny(kPhaseKeywords)) return std::nullopt;
  for (const PhasePattern& p : Patterns()) {
    if (RE2::PartialMatch(line, *p.re)) return p.kind;
  }
  return std::nullopt;
}

}  // namespace jobmon::triage
