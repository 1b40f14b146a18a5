#pragma once
// Next steps that depend on the framework a log shows (runtime.h): a class's
// catalogue steps (signatures.cc) are written for the reference MaxText/JAX
// pipeline; a PyTorch job, or one whose framework the log does not name,
// gets these instead. Private to the analysis (src/analysis/advice.cc).

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/triage/runtime.h"

namespace jobmon::triage {

// The steps for `class_id` in a job of `runtimes`; empty: the catalogue's.
std::vector<std::string> RuntimeNextSteps(std::string_view class_id, RuntimeSet runtimes);

// Where to start reading when one rank failed first: rank ("1", or a
// launcher's "task 1"), host and line as the chain names them (empty ones
// left out).
// `others`: the chain has other ranks' errors that follow from it.
std::string FirstFailureStep(std::string_view rank, std::string_view host, uint64_t line,
                             bool others);

}  // namespace jobmon::triage
