#include "jobmon/triage/step_lines.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>

namespace jobmon::triage {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void SkipSpaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

std::optional<int64_t> TakeInt(std::string_view& s) {
  SkipSpaces(s);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc()) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return value;
}

std::optional<double> TakeDouble(std::string_view& s) {
  SkipSpaces(s);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return value;
}

// The text right after the first occurrence of `key`, or nullopt.
std::optional<std::string_view> After(std::string_view line, std::string_view key) {
  size_t pos = line.find(key);
  if (pos == line.npos) return std::nullopt;
  return line.substr(pos + key.size());
}

int TwoDigits(std::string_view s, size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); }

}  // namespace

const char* ToString(StepProfile profile) {
  switch (profile) {
    case StepProfile::kMaxText:
      return "maxtext";
    case StepProfile::kMegatron:
      return "megatron";
    case StepProfile::kTorchTitan:
      return "torchtitan";
    case StepProfile::kHuggingFace:
      return "hf";
    case StepProfile::kCustom:
      return "custom";
  }
  return "?";
}

std::optional<StepProfile> ParseStepProfile(std::string_view name) {
  for (StepProfile p : {StepProfile::kMaxText, StepProfile::kMegatron, StepProfile::kTorchTitan,
                        StepProfile::kHuggingFace, StepProfile::kCustom}) {
    if (name == ToString(p)) return p;
  }
  return std::nullopt;
}

std::optional<double> ParseIsoTimestamp(std::string_view s) {
  // YYYY-MM-DD?HH:MM:SS
  if (s.size() < 19) return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (!IsDigit(s[i])) return std::nullopt;
  }
  if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  tm t{};
  t.tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + TwoDigits(s, 2) - 1900;
  t.tm_mon = TwoDigits(s, 5) - 1;
  t.tm_mday = TwoDigits(s, 8);
  t.tm_hour = TwoDigits(s, 11);
  t.tm_min = TwoDigits(s, 14);
  t.tm_sec = TwoDigits(s, 17);
  if (t.tm_mon < 0 || t.tm_mon > 11 || t.tm_mday < 1 || t.tm_mday > 31 || t.tm_hour > 23 ||
      t.tm_min > 59 || t.tm_sec > 60) {
    return std::nullopt;
  }
  double seconds = static_cast<double>(timegm(&t));
  if (s.size() > 20 && (s[19] == ',' || s[19] == '.') && IsDigit(s[20])) {
    double scale = 0.1;
    for (size_t i = 20; i < s.size() && IsDigit(s[i]) && i < 29; ++i, scale /= 10) {
      seconds += (s[i] - '0') * scale;
    }
  }
  return seconds;
}

std::optional<double> ParseAbslTimestamp(std::string_view line, int year) {
  std::string_view s = WithoutTaskLabel(line);
  if (s.size() < 15 || (s[0] != 'I' && s[0] != 'W' && s[0] != 'E' && s[0] != 'F') || s[5] != ' ') {
    return std::nullopt;
  }
  std::string iso = std::to_string(year);
  iso.insert(0, 4 - std::min<size_t>(4, iso.size()), '0');
  iso += '-';
  iso.append(s.substr(1, 2));
  iso += '-';
  iso.append(s.substr(3, 2));
  iso += ' ';
  iso.append(s.substr(6, 8));
  return ParseIsoTimestamp(iso);
}

std::optional<double> FindIsoTimestamp(std::string_view line) {
  // Look for "YYYY-" with a plausible century, then validate the rest.
  for (size_t pos = 0; pos + 19 <= line.size(); ++pos) {
    if ((line[pos] == '1' || line[pos] == '2') && line[pos + 4] == '-') {
      if (auto t = ParseIsoTimestamp(line.substr(pos))) return t;
    }
  }
  return std::nullopt;
}

std::optional<int> TaskLabel(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 7 && line[i] == ' ') ++i;  // srun right-aligns labels
  size_t start = i;
  while (i < line.size() && IsDigit(line[i]) && i - start < 6) ++i;
  if (i == start || i + 1 >= line.size() || line[i] != ':' || line[i + 1] != ' ')
    return std::nullopt;
  int task = 0;
  std::from_chars(line.data() + start, line.data() + i, task);
  return task;
}

std::string_view WithoutTaskLabel(std::string_view line) {
  if (!TaskLabel(line)) return line;
  return line.substr(line.find(": ") + 2);
}

std::optional<StepSample> ParseMaxTextStep(std::string_view line) {
  auto rest = After(line, "completed step:");
  if (!rest) return std::nullopt;
  auto step = TakeInt(*rest);
  if (!step || *step < 0) return std::nullopt;
  StepSample sample{*step, std::nullopt, std::nullopt, std::nullopt};
  if (auto seconds_text = After(*rest, "seconds:")) {
    if (auto seconds = TakeDouble(*seconds_text); seconds && *seconds >= 0)
      sample.seconds = seconds;
  }
  return sample;
}

std::optional<StepSample> ParseMegatronStep(std::string_view line) {
  auto rest = After(line, "iteration");
  if (!rest) return std::nullopt;
  auto step = TakeInt(*rest);
  SkipSpaces(*rest);
  if (!step || *step < 0 || rest->empty() || rest->front() != '/') return std::nullopt;
  rest->remove_prefix(1);
  auto total = TakeInt(*rest);
  if (*step < 1) return std::nullopt;
  // Megatron counts iterations from 1; steps here are 0-indexed.
  StepSample sample{*step - 1, std::nullopt, total, FindIsoTimestamp(line)};
  if (auto ms_text = After(*rest, "elapsed time per iteration (ms):")) {
    if (auto ms = TakeDouble(*ms_text); ms && *ms >= 0) sample.seconds = *ms / 1000.0;
  }
  return sample;
}

std::optional<StepSample> ParseTorchTitanStep(std::string_view line) {
  auto rest = After(line, "step:");
  if (!rest) return std::nullopt;
  auto step = TakeInt(*rest);
  if (!step || *step < 0 || rest->find("loss:") == rest->npos) return std::nullopt;
  return StepSample{*step, std::nullopt, std::nullopt, FindIsoTimestamp(line)};
}

std::optional<StepSample> ParseTqdmStep(std::string_view line) {
  // tqdm rewrites its bar with \r: only the last update counts.
  size_t cr = line.find_last_of('\r', line.size() >= 2 ? line.size() - 2 : 0);
  if (cr != line.npos && cr + 1 < line.size()) line = line.substr(cr + 1);
  size_t bracket = line.rfind(" [");
  if (bracket == line.npos) return std::nullopt;
  size_t slash = line.rfind('/', bracket);
  if (slash == line.npos) return std::nullopt;
  size_t start = slash;
  while (start > 0 && IsDigit(line[start - 1])) --start;
  std::string_view counts = line.substr(start);
  auto step = TakeInt(counts);
  if (!step || counts.empty() || counts.front() != '/') return std::nullopt;
  counts.remove_prefix(1);
  auto total = TakeInt(counts);
  std::string_view timing = line.substr(bracket + 2);
  size_t comma = timing.find(',');
  if (comma == timing.npos) return std::nullopt;
  timing.remove_prefix(comma + 1);
  auto rate = TakeDouble(timing);
  if (!rate || *rate <= 0 || *step < 1) return std::nullopt;
  // tqdm shows how many are done ("60/400"): the last finished step is 59.
  StepSample sample{*step - 1, std::nullopt, total, std::nullopt};
  if (timing.substr(0, 4) == "s/it") {
    sample.seconds = *rate;
  } else if (timing.substr(0, 4) == "it/s") {
    sample.seconds = 1.0 / *rate;
  } else {
    return std::nullopt;
  }
  return sample;
}

std::optional<StepSample> ParseStep(StepProfile profile, std::string_view line) {
  switch (profile) {
    case StepProfile::kMaxText:
      return ParseMaxTextStep(line);
    case StepProfile::kMegatron:
      return ParseMegatronStep(line);
    case StepProfile::kTorchTitan:
      return ParseTorchTitanStep(line);
    case StepProfile::kHuggingFace:
      return ParseTqdmStep(line);
    case StepProfile::kCustom:
      return std::nullopt;  // handled with the configured regex
  }
  return std::nullopt;
}

const std::vector<StepProfile>& AutoDetectedProfiles() {
  static const std::vector<StepProfile> kProfiles = {StepProfile::kMaxText, StepProfile::kMegatron,
                                                     StepProfile::kTorchTitan,
                                                     StepProfile::kHuggingFace};
  return kProfiles;
}

std::optional<DetectedStep> DetectStep(std::string_view line) {
  for (StepProfile profile : AutoDetectedProfiles()) {
    if (auto sample = ParseStep(profile, line)) return DetectedStep{profile, *sample};
  }
  return std::nullopt;
}

}  // namespace jobmon::triage
