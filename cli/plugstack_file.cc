#include "plugstack_file.h"

#include <glob.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "jobmon/common/text_lines.h"
#include "jobmon/common/toml_config.h"

namespace jobmon::cli {
namespace {

constexpr int kMaxIncludeDepth = 8;

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> paths;
  glob_t matches{};
  if (glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  return paths;  // glob sorts them, as Slurm reads them
}

void Scan(const std::string& path, int depth, std::set<std::string>& seen, PlugstackScan& out) {
  std::error_code ec;
  std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
  if (!seen.insert(ec ? path : canonical).second) return;
  auto text = ReadConfigFile(path);
  if (!text) {
    out.problems.push_back(text.error().message);
    return;
  }
  PlugstackText parsed = ParsePlugstackText(*text);
  for (const auto& [line, what] : parsed.errors) {
    out.problems.push_back(path + ":" + std::to_string(line) + ": " + what);
  }
  for (const PlugstackLine& entry : parsed.lines) {
    if (entry.directive != "include") {
      if (IsDiagPlugin(entry.path)) out.diag_lines.push_back({path, entry});
      continue;
    }
    if (depth >= kMaxIncludeDepth) {
      out.problems.push_back(path + ":" + std::to_string(entry.line) +
                             ": includes nested deeper than " + std::to_string(kMaxIncludeDepth));
      continue;
    }
    std::string pattern = entry.path;
    if (pattern.front() != '/') {
      std::string dir = std::filesystem::path(path).parent_path().string();
      pattern = (dir.empty() ? "." : dir) + "/" + pattern;
    }
    for (const std::string& included : Glob(pattern)) Scan(included, depth + 1, seen, out);
  }
}

}  // namespace

std::string DefaultPlugstackPath(const char* slurm_conf_env) {
  std::string slurm_conf =
      slurm_conf_env && *slurm_conf_env ? slurm_conf_env : "/etc/slurm/slurm.conf";
  std::filesystem::path dir = std::filesystem::path(slurm_conf).parent_path();
  return (dir.empty() ? std::filesystem::path("plugstack.conf") : dir / "plugstack.conf").string();
}

bool IsDiagPlugin(std::string_view plugin_path) {
  return std::filesystem::path(plugin_path).filename() == "spank_diag.so";
}

PlugstackText ParsePlugstackText(std::string_view text) {
  PlugstackText out;
  int number = 0;
  for (std::string_view line : TextLines(text)) {
    ++number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string> words = Words(line);
    if (words.empty()) continue;
    const std::string& directive = words[0];
    if (directive == "include") {
      if (words.size() != 2) {
        out.errors.emplace_back(number, "expected `include PATTERN`");
        continue;
      }
      out.lines.push_back({number, directive, words[1], {}});
    } else if (directive == "required" || directive == "optional") {
      if (words.size() < 2) {
        out.errors.emplace_back(number, "expected `" + directive + " PLUGIN [ARGS...]`");
        continue;
      }
      out.lines.push_back(
          {number, directive, words[1], std::vector<std::string>(words.begin() + 2, words.end())});
    } else {
      out.errors.emplace_back(number, "'" + directive +
                                          "': expected `required|optional PLUGIN [ARGS...]` or "
                                          "`include PATTERN`");
    }
  }
  return out;
}

PlugstackScan ScanPlugstack(const std::string& path) {
  PlugstackScan out;
  std::set<std::string> seen;
  Scan(path, 0, seen, out);
  return out;
}

}  // namespace jobmon::cli
