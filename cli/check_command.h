#pragma once
// `jobmon check`: validates an installation's configuration (jobmon.toml,
// secrets, the plugin's plugstack.conf line and the paths it names, the
// state database's directory, Slurm) and prints one line per problem.

#include <CLI/CLI.hpp>
#include <functional>

namespace jobmon::cli {

std::function<int()> AddCheckCommand(CLI::App& app);

}  // namespace jobmon::cli
