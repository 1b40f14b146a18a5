#pragma once
// Slurm's plugstack.conf as `jobmon check` reads it (spank(8)): lines
// `required|optional PLUGIN [ARGS...]` and `include GLOB` (relative to the
// including file's directory), `#` to the end of a line a comment. The
// plugin's own arguments are then judged by the plugin's own parser
// (spank/lifecycle/plugin_config.h), so the check and the plugin agree.

#include <string>
#include <string_view>
#include <vector>

namespace jobmon::cli {

struct PlugstackLine {
  int line = 0;           // 1-based
  std::string directive;  // "required", "optional" or "include"
  std::string path;       // the plugin, or the include pattern
  std::vector<std::string> args;
};

struct PlugstackText {
  std::vector<PlugstackLine> lines;
  std::vector<std::pair<int, std::string>> errors;  // line, what is wrong
};

// Pure: one file's text.
PlugstackText ParsePlugstackText(std::string_view text);

// A spank_diag.so line, wherever it was found.
struct DiagPluginLine {
  std::string file;
  PlugstackLine entry;
};

struct PlugstackScan {
  std::vector<DiagPluginLine> diag_lines;
  std::vector<std::string> problems;  // "file:line: what" or "file: what"
};

// Reads `path` and the files it includes (depth-limited, each file once).
PlugstackScan ScanPlugstack(const std::string& path);

// Slurm's default: plugstack.conf beside slurm.conf ($SLURM_CONF, else
// /etc/slurm/slurm.conf); `slurm_conf_env` null or empty: unset.
std::string DefaultPlugstackPath(const char* slurm_conf_env);

// Whether a plugstack line loads the diag plugin: its file name is spank_diag.so.
bool IsDiagPlugin(std::string_view plugin_path);

}  // namespace jobmon::cli
