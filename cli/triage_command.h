#pragma once
// `jobmon triage`: offline triage of a job log, a job dir, a job id, or a
// whole outputs dir.

#include <CLI/CLI.hpp>
#include <functional>

namespace jobmon::cli {

// Adds the subcommand; the returned function runs it and gives the exit code.
std::function<int()> AddTriageCommand(CLI::App& app);

}  // namespace jobmon::cli
