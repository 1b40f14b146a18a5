#pragma once
// `jobmon status`, `jobmon list`, `jobmon watch`: the daemon's view of jobs,
// from its state database (monitor.state_db), and for status also straight
// from the job's log when no daemon follows it.

#include <CLI/CLI.hpp>
#include <functional>

namespace jobmon::cli {

std::function<int()> AddStatusCommand(CLI::App& app);
std::function<int()> AddListCommand(CLI::App& app);
std::function<int()> AddWatchCommand(CLI::App& app);
std::function<int()> AddHoldCommand(CLI::App& app);

}  // namespace jobmon::cli
