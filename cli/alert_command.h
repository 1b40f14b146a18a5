#pragma once
// `jobmon alert test`: one test alert through every configured receiver,
// each result reported (secrets redacted).

#include <CLI/CLI.hpp>
#include <functional>

namespace jobmon::cli {

std::function<int()> AddAlertCommand(CLI::App& app);

}  // namespace jobmon::cli
