#pragma once
// Rendering a TriageReport: Markdown in docs/triage.md's output format, and
// JSON with a versioned schema (documented in docs/triage-json.md).

#include <nlohmann/json.hpp>
#include <string>

#include "jobmon/triage/triage.h"

namespace jobmon::triage {

inline constexpr const char* kTriageJsonSchema = "jobmon.triage/v1";

std::string RenderMarkdown(const TriageReport& report);
// The "Training progress projection" table alone (`jobmon status`).
std::string RenderProjectionTable(const Progress& progress);
// The causal chain (`--explain`): each event, what explains it and by
// which rule, then the rules used in words.
std::string RenderChain(const CausalChain& chain);
nlohmann::json ChainJson(const CausalChain& chain);
nlohmann::json ToJson(const TriageReport& report);
// One line for `jobmon triage --all`.
std::string SummaryLine(const TriageReport& report);

}  // namespace jobmon::triage
