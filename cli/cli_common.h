#pragma once
// What every jobmon subcommand shares: the exit codes outside triage's
// status codes, how an error is printed, JSON output, the --json flag, and
// the runner main() calls for each subcommand.

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace jobmon::cli {

inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;       // the command ran; what it tried failed
inline constexpr int kUsageError = 2;   // arguments, configuration or input refused
inline constexpr int kNotThisOne = -1;  // a runner whose subcommand was not given

// "jobmon <command>: <message>" on stderr; returns `code` for `return Fail(...)`.
int Fail(std::string_view command, std::string_view message, int code = kUsageError);

// Unix seconds with the fraction.
double NowSeconds();

bool PathExists(const std::string& path);

// JSON for the terminal, newline-terminated. Bytes that are not UTF-8 (a
// job name, a log line) are replaced rather than thrown on. indent < 0: one line.
std::string JsonText(const nlohmann::json& value, int indent = 2);

void AddJsonFlag(CLI::App* cmd, bool& json,
                 const std::string& description = "Machine-readable output");

// The function main() calls after parsing: runs `run(*args)` when `cmd` was
// the subcommand given, else kNotThisOne.
template <class Args, class Run>
std::function<int()> Runner(CLI::App* cmd, std::shared_ptr<Args> args, Run run) {
  return [cmd, args, run] { return cmd->parsed() ? run(*args) : kNotThisOne; };
}

}  // namespace jobmon::cli
