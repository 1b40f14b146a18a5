// Config from a log's header (docs/diagnose.md, Comparing two jobs step
// 1: "Parse PASSTHROUGH_ARGS from the header of each log file and diff
// them"), widened to the other places a job prints its configuration.

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compare/compare.h"
#include "jobmon/common/text_lines.h"

namespace jobmon::diagnose {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "0: " (srun --label), "[default0]:" (torchrun --tee), "[rank1]:".
std::string_view StripRankPrefix(std::string_view line) {
  size_t digits = 0;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits > 0 && StartsWith(line.substr(digits), ": ")) return line.substr(digits + 2);
  if (StartsWith(line, "[")) {
    size_t close = line.find("]:");
    if (close != std::string_view::npos && close < 20) {
      std::string_view tag = line.substr(1, close - 1);
      if (StartsWith(tag, "default") || StartsWith(tag, "rank")) return line.substr(close + 2);
    }
  }
  return line;
}

bool IsIdentifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key.front()))) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

bool IsUpperIdentifier(std::string_view key) {
  return IsIdentifier(key) && std::none_of(key.begin(), key.end(), [](char c) {
           return std::islower(static_cast<unsigned char>(c));
         });
}

std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// "a=1, b='x, y', c=[1, 2]": split on top-level ", " (quotes and brackets
// kept whole), as argparse's Namespace repr prints.
std::vector<std::string_view> SplitTopLevelCommas(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (start < s.size()) out.push_back(Trim(s.substr(start)));
  return out;
}

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string FlagKey(std::string_view flag) {
  std::string key(flag);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

class HeaderParser {
 public:
  explicit HeaderParser(ConfigMap& out) : out_(out) {}

  void Line(std::string_view raw) {
    std::string_view line = Trim(StripRankPrefix(Trim(raw)));
    if (line.empty()) return;
    if (in_training_args_) {  // HF TrainingArguments.__str__: "key=value," per line, then ")"
      if (line == ")") {
        in_training_args_ = false;
        return;
      }
      Assignment(line, "HF TrainingArguments");
      return;
    }
    if (EndsWith(line, "TrainingArguments(")) {
      in_training_args_ = true;
      return;
    }
    if (StartsWith(line, "+ ")) line = Trim(line.substr(2));  // bash xtrace of the job script
    if (StartsWith(line, "PASSTHROUGH_ARGS=")) return Passthrough(line.substr(17));
    if (StartsWith(line, "Config param ")) return ConfigParam(line.substr(13));
    if (auto open = line.find("Namespace(");
        open != std::string_view::npos && EndsWith(line, ")")) {
      return Namespace(line.substr(open + 10, line.size() - open - 11));
    }
    if (StartsWith(line, "\"")) return LightningHparam(line);
    if (CommandLine(line)) return;
    Assignment(line, "key=value line");
  }

 private:
  void Put(std::string key, std::string_view value, const std::string& source) {
    if (key.empty()) return;
    out_.emplace(std::move(key), ConfigValue{std::string(value), source});
  }

  // "KEY=value": an environment line of the job script, or a dataclass dump
  // line ("key=value," trailing comma). Lower-case keys only without spaces
  // in the value, so that progress lines ("loss=0.5 lr=1e-4") are not read.
  void Assignment(std::string_view line, const std::string& source) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return;
    std::string_view key = line.substr(0, eq);
    std::string_view value = Trim(line.substr(eq + 1));
    if (EndsWith(value, ",")) value = Trim(value.substr(0, value.size() - 1));
    if (!IsIdentifier(key)) return;
    bool spaced = value.find_first_of(" \t") != std::string_view::npos;
    if (spaced && !IsUpperIdentifier(key)) return;
    Put(std::string(key), value, source);
  }

  // MaxText job scripts: PASSTHROUGH_ARGS=steps=1000 per_device_batch_size=2 ...
  void Passthrough(std::string_view args) {
    auto tokens = SplitWhitespace(args);
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string_view t = tokens[i];
      if (StartsWith(t, "--")) {
        i += Flag(tokens, i, "", "PASSTHROUGH_ARGS");
        continue;
      }
      size_t eq = t.find('=');
      if (eq != std::string_view::npos && eq > 0 && IsIdentifier(t.substr(0, eq))) {
        Put(std::string(t.substr(0, eq)), t.substr(eq + 1), "PASSTHROUGH_ARGS");
      }
    }
  }

  // MaxText pyconfig: "Config param checkpoint_period: 200".
  void ConfigParam(std::string_view rest) {
    size_t colon = rest.find(": ");
    if (colon == std::string_view::npos) return;
    std::string_view key = rest.substr(0, colon);
    if (IsIdentifier(key)) Put(std::string(key), Trim(rest.substr(colon + 2)), "Config param");
  }

  // print(args) of argparse: Namespace(lr=0.1, batch_size=32, name='x').
  void Namespace(std::string_view inner) {
    for (auto item : SplitTopLevelCommas(inner)) {
      size_t eq = item.find('=');
      if (eq == std::string_view::npos || !IsIdentifier(item.substr(0, eq))) continue;
      Put(std::string(item.substr(0, eq)), Trim(item.substr(eq + 1)), "argparse Namespace");
    }
  }

  // Lightning's AttributeDict repr (hparams): "\"lr\":         \t0.001".
  void LightningHparam(std::string_view line) {
    size_t close = line.find("\":", 1);
    if (close == std::string_view::npos) return;
    std::string_view key = line.substr(1, close - 1);
    std::string_view value = Trim(line.substr(close + 2));
    if (IsIdentifier(key) && !value.empty()) Put(std::string(key), value, "Lightning hparams");
  }

  // `--flag value` / `--flag=value` / `--switch` at tokens[i]; returns how
  // many tokens after i it consumed. A value ending in ".py" is the script.
  size_t Flag(const std::vector<std::string_view>& tokens, size_t i, const std::string& prefix,
              const std::string& source) {
    std::string_view t = tokens[i];
    std::string_view name = t.substr(t.find_first_not_of('-'));
    if (name.empty()) return 0;
    size_t eq = name.find('=');
    if (eq != std::string_view::npos) {
      Put(prefix + FlagKey(name.substr(0, eq)), name.substr(eq + 1), source);
      return 0;
    }
    bool has_value =
        i + 1 < tokens.size() && !StartsWith(tokens[i + 1], "-") && !EndsWith(tokens[i + 1], ".py");
    Put(prefix + FlagKey(name), has_value ? tokens[i + 1] : std::string_view("true"), source);
    return has_value ? 1 : 0;
  }

  // torchrun/srun/python command lines (echoed or xtraced by the job
  // script): launcher flags keyed "torchrun --nnodes"-style under the
  // launcher, the training script's own flags by their bare name (as in
  // PASSTHROUGH_ARGS). Returns false when the line is no command line.
  bool CommandLine(std::string_view line) {
    static const std::set<std::string> kLaunchers = {
        "srun", "torchrun", "mpirun", "accelerate", "deepspeed", "python", "python3"};
    auto tokens = SplitWhitespace(line);
    if (tokens.size() < 2) return false;
    std::string program = Basename(tokens[0]);
    bool is_script = EndsWith(program, ".py");
    if (!is_script && !kLaunchers.contains(program)) return false;
    if (std::none_of(tokens.begin() + 1, tokens.end(),
                     [](std::string_view t) { return StartsWith(t, "-"); })) {
      return false;
    }
    std::string launcher = is_script ? "" : program;
    std::string script = is_script ? program : "";
    for (size_t i = 1; i < tokens.size(); ++i) {
      std::string_view t = tokens[i];
      if (StartsWith(program, "python") && script.empty() && t == "-m" && i + 1 < tokens.size()) {
        if (tokens[i + 1] == "torch.distributed.run") launcher = "torchrun";
        ++i;
        continue;
      }
      if (script.empty() && kLaunchers.contains(Basename(t)) && !StartsWith(t, "-")) {
        launcher = Basename(t);  // srun ... torchrun ...: the inner launcher's flags follow
        continue;
      }
      if (script.empty() && EndsWith(t, ".py")) {
        script = Basename(t);
        continue;
      }
      if (!StartsWith(t, "-")) continue;
      if (!script.empty()) {
        if (StartsWith(t, "--")) i += Flag(tokens, i, "", script);
      } else if (launcher != "python" && launcher != "python3") {
        // Launcher flags, short ones too (srun -N 2).
        i += Flag(tokens, i, launcher + (StartsWith(t, "--") ? " --" : " -"), launcher);
      }
    }
    return true;
  }

  ConfigMap& out_;
  bool in_training_args_ = false;
};

// Keys that name the job run rather than its configuration.
bool IsIdentityKey(const std::string& key) {
  static const std::set<std::string> kIdentity = {
      "SLURM_JOB_ID",       "SLURM_JOBID",        "JAX_COORDINATOR_ADDRESS",
      "MASTER_ADDR",        "MASTER_PORT",        "torchrun --rdzv_endpoint",
      "torchrun --rdzv_id", "torchrun --log_dir", "run_name",
      "output_dir",         "logging_dir",        "run_id"};
  return kIdentity.contains(key);
}

// Python prints True/False, shell scripts true/false: the same setting.
std::string Comparable(const std::string& value) {
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "true" || lower == "false" ? lower : value;
}

}  // namespace

ConfigMap ParseConfigHeader(std::string_view log_text, size_t max_lines) {
  ConfigMap out;
  HeaderParser parser(out);
  size_t lines = 0;
  for (std::string_view line : TextLines(log_text)) {
    if (lines >= max_lines) break;
    // tqdm redraws with '\r': each redraw is its own line.
    size_t part = 0;
    while (part <= line.size()) {
      size_t cr = line.find('\r', part);
      if (cr == std::string_view::npos) cr = line.size();
      parser.Line(line.substr(part, cr - part));
      part = cr + 1;
    }
    ++lines;
  }
  return out;
}

std::vector<ConfigDifference> DiffConfig(const ConfigMap& a, const ConfigMap& b) {
  std::vector<ConfigDifference> out;
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& key : keys) {
    if (IsIdentityKey(key)) continue;
    auto ia = a.find(key);
    auto ib = b.find(key);
    std::string va = ia == a.end() ? "(not set)" : ia->second.value;
    std::string vb = ib == b.end() ? "(not set)" : ib->second.value;
    if (Comparable(va) != Comparable(vb)) out.push_back({key, va, vb});
  }
  return out;
}

}  // namespace jobmon::diagnose
