#pragma once
// Which phase a log line announces, if any: an evaluation or validation
// starting, a checkpoint being saved or loaded, a data loader (re)starting.
// The wordings are the frameworks' own (each cited in
// docs/signature-sources.md, "Phases"), read as a family, not string by
// string: an announcing verb ("running", "begin", "saving", "loading",
// "evaluating", ...) before the phase's noun. A result ("saved", "eval
// loss ...") announces nothing. Pure; the caller strips srun's task label.

#include <optional>
#include <string_view>

#include "jobmon/triage/stall_rule.h"

namespace jobmon::triage {

std::optional<PhaseKind> AnnouncedPhase(std::string_view line);

// The phase's own progress bar at its end ("Validation DataLoader 0:
// 100%|...| 10/10 [...]": its last tqdm update done == total): the phase is
// over, whether or not the training's next step is visible yet (a bar
// without newlines reaches the log only at the epoch's end).
bool PhaseBarDone(std::string_view line);

// A line that reports a phase finished: Megatron's "successfully saved
// checkpoint from iteration N", "Saved checkpoint ...", "checkpoint saved",
// "evaluation done", "Loaded model weights from the checkpoint at" (each
// cited in docs/signature-sources.md, "Phases").
bool PhaseEnded(std::string_view line);

// A checkpoint save in the frameworks' words: announced ("Saving model
// checkpoint to ...", "saving checkpoint at iteration N"), or reported
// done ("Saved checkpoint ...", "checkpoint saved in 8.0 s").
enum class CheckpointSave { kNone, kAnnounced, kDone };
CheckpointSave CheckpointSaveOf(std::string_view line);

}  // namespace jobmon::triage
