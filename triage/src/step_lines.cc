#include "jobmon/triage/step_lines.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <iterator>
#include <string>

#include "jobmon/common/ascii.h"
#include "jobmon/common/find_text.h"

namespace jobmon::triage {
namespace {

void SkipSpaces(std::string_view& s) {
  size_t blanks = 0;
  while (blanks < s.size() && (s[blanks] == ' ' || s[blanks] == '\t')) ++blanks;
  s.remove_prefix(blanks);
}

// TakeInt and TakeDouble read what std::from_chars reads, computing the
// common short forms directly (every step line holds numbers, and reading
// them with from_chars was about a tenth of a large log's triage, by perf):
// an integer of at most 18 digits, and a decimal "D+" or "D+.D+" of at most
// 15 digits without an exponent, which is exactly digits / 10^fraction
// digits (both are doubles exactly, and IEEE division rounds correctly, as
// from_chars does). Anything else goes to from_chars.
[[gnu::always_inline]] inline std::optional<int64_t> TakeInt(std::string_view& s) {
  SkipSpaces(s);
  const size_t first = !s.empty() && s.front() == '-' ? 1 : 0;
  const size_t limit = std::min(s.size(), first + 18);
  size_t i = first;
  uint64_t magnitude = 0;
  for (unsigned digit; i < limit && (digit = static_cast<unsigned char>(s[i]) - '0') < 10; ++i)
    magnitude = magnitude * 10 + digit;
  if (i > first && (i == s.size() || !IsAsciiDigit(s[i]))) {
    s.remove_prefix(i);
    const auto value = static_cast<int64_t>(magnitude);
    return first ? -value : value;
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc()) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return value;
}

[[gnu::always_inline]] inline std::optional<double> ShortDecimal(std::string_view& s) {
  static constexpr std::array<double, 16> kPowersOfTen = {
      1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  constexpr size_t kMaxDigits = 15;
  const bool negative = !s.empty() && s.front() == '-';
  size_t i = negative ? 1 : 0;
  uint64_t mantissa = 0;
  size_t digits = 0;
  for (; i < s.size() && IsAsciiDigit(s[i]); ++i, ++digits) {
    if (digits == kMaxDigits) return std::nullopt;
    mantissa = mantissa * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  size_t fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && IsAsciiDigit(s[i]); ++i, ++fraction, ++digits) {
      if (digits == kMaxDigits) return std::nullopt;
      mantissa = mantissa * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    if (fraction == 0) return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) return std::nullopt;
  const double value = static_cast<double>(mantissa) / kPowersOfTen[fraction];
  s.remove_prefix(i);
  return negative ? -value : value;
}

[[gnu::always_inline]] inline std::optional<double> TakeDouble(std::string_view& s) {
  SkipSpaces(s);
  if (auto value = ShortDecimal(s)) return value;
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return value;
}

// The text right after the first occurrence of `key`, or nullopt.
std::optional<std::string_view> After(std::string_view line, std::string_view key) {
  size_t pos = FindText(line, key);
  if (pos == line.npos) return std::nullopt;
  return line.substr(pos + key.size());
}

int TwoDigits(std::string_view s, size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); }

// `word` is lower case.
size_t FindNoCase(std::string_view text, std::string_view word, size_t from) {
  for (size_t i = from; i + word.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < word.size() && AsciiLower(text[i + k]) == word[k]) ++k;
    if (k == word.size()) return i;
  }
  return text.npos;
}

// `word` is lower case.
bool EqualsNoCase(std::string_view text, std::string_view word) {
  if (text.size() != word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (AsciiLower(text[i]) != word[i]) return false;
  }
  return true;
}

bool ContainsNoCase(std::string_view text, std::string_view word) {
  return FindNoCase(text, word, 0) != text.npos;
}

// tqdm redraws a bar with "\r" + bar (tqdm/std.py print_status), so a log
// line holds every update; a bar at position > 0 (nested: an evaluation or a
// checkpoint writer under the training bar) is written after "\n" and
// followed by ESC[A to move back up (tqdm/std.py moveto, _term_move_up).
// Calls `parse` on the \r-separated pieces from the last and returns the
// first that parses, marked `nested` when the piece was a nested bar's.
template <typename Parse>
std::optional<StepSample> LastBarUpdate(std::string_view line, Parse parse) {
  size_t end = line.size();
  while (end > 0 && (line[end - 1] == '\r' || line[end - 1] == '\n')) --end;
  line = line.substr(0, end);
  for (;;) {
    size_t cr = line.rfind('\r');
    std::string_view piece = cr == line.npos ? line : line.substr(cr + 1);
    size_t up = piece.find("\x1b[A");
    if (auto sample = parse(piece.substr(0, up))) {
      sample->nested = up != piece.npos;
      return sample;
    }
    if (cr == line.npos) return std::nullopt;
    line = line.substr(0, cr);
  }
}

// A bar's description names what it counts; these are not training steps
// (Lightning's "Validation DataLoader 0", "Sanity Checking", "Testing",
// "Predicting"; datasets' "Map"; checkpoint writers and loaders).
bool NotTrainingBar(std::string_view description) {
  static constexpr std::string_view kWords[] = {"valid",    "eval",   "test",       "predict",
                                                "sanity",   "saving", "checkpoint", "loading",
                                                "download", "map"};
  // Descriptions are short: folded once into a buffer instead of per word.
  char folded[128];
  if (description.size() > sizeof folded) {
    return std::any_of(std::begin(kWords), std::end(kWords),
                       [&](std::string_view word) { return ContainsNoCase(description, word); });
  }
  for (size_t i = 0; i < description.size(); ++i) folded[i] = AsciiLower(description[i]);
  const std::string_view text(folded, description.size());
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](std::string_view word) { return text.find(word) != text.npos; });
}

// "k/n" in a bar piece: where it starts, k and n (n empty for "?").
struct BarCount {
  size_t start = 0;
  int64_t done = 0;
  std::optional<int64_t> total;
  std::string_view after;
};

std::optional<BarCount> FindBarCount(std::string_view piece, size_t from) {
  for (size_t slash = piece.find('/', from); slash != piece.npos;
       slash = piece.find('/', slash + 1)) {
    size_t start = slash;
    while (start > from && IsAsciiDigit(piece[start - 1])) --start;
    if (start == slash || (start > 0 && piece[start - 1] != ' ' && piece[start - 1] != '|'))
      continue;
    std::string_view rest = piece.substr(start);
    auto done = TakeInt(rest);
    if (!done || rest.empty() || rest.front() != '/') continue;
    rest.remove_prefix(1);
    BarCount count{start, *done, std::nullopt, rest};
    if (!rest.empty() && rest.front() == '?') {
      count.after = rest.substr(1);
      return count;
    }
    if (rest.empty() || !IsAsciiDigit(rest.front())) continue;
    count.total = TakeInt(rest);
    count.after = rest;
    return count;
  }
  return std::nullopt;
}

// Seconds per step from tqdm's rate "1.23s/it" or "10.8it/s" after ", " in
// the bracket; nullopt without one ("?it/s" at the start).
std::optional<double> BarSeconds(std::string_view after) {
  size_t bracket = after.find('[');
  if (bracket == after.npos) return std::nullopt;
  std::string_view timing = after.substr(bracket + 1);
  size_t comma = timing.find(',');
  if (comma == timing.npos) return std::nullopt;
  timing.remove_prefix(comma + 1);
  auto rate = TakeDouble(timing);
  if (!rate || *rate <= 0) return std::nullopt;
  if (timing.substr(0, 4) == "s/it") return *rate;
  if (timing.substr(0, 4) == "it/s") return 1.0 / *rate;
  return std::nullopt;
}

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
    case StepProfile::kLightning:
      return "lightning";
    case StepProfile::kDeepSpeed:
      return "deepspeed";
    case StepProfile::kT5x:
      return "t5x";
    case StepProfile::kGeneric:
      return "generic";
    case StepProfile::kLearned:
      return "learned";
    case StepProfile::kPulse:
      return "pulse";
  }
  return "?";
}

std::optional<StepProfile> ParseStepProfile(std::string_view name) {
  for (int p = 0; p < kStepProfileCount; ++p) {
    if (name == ToString(static_cast<StepProfile>(p))) return static_cast<StepProfile>(p);
  }
  return std::nullopt;
}

std::optional<double> ParseIsoTimestamp(std::string_view s) {
  // YYYY-MM-DD?HH:MM:SS
  if (s.size() < 19) return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (!IsAsciiDigit(s[i])) return std::nullopt;
  }
  if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  const int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + TwoDigits(s, 2);
  const int month = TwoDigits(s, 5), day = TwoDigits(s, 8);
  const int hour = TwoDigits(s, 11), minute = TwoDigits(s, 14), second = TwoDigits(s, 17);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  // Civil-day arithmetic, not timegm: libc's goes through the time-zone
  // code on every call (a twentieth of a scan's reading thread). A day past
  // its month's end rolls on, as timegm's does (std::chrono's conversion
  // of a year_month_day that is not ok()).
  const std::chrono::sys_days date = std::chrono::year_month_day{
      std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
      std::chrono::day{static_cast<unsigned>(day)}};
  double seconds = static_cast<double>(
      std::chrono::duration_cast<std::chrono::seconds>(date.time_since_epoch()).count() +
      hour * 3600 + minute * 60 + second);
  if (s.size() > 20 && (s[19] == ',' || s[19] == '.') && IsAsciiDigit(s[20])) {
    double scale = 0.1;
    for (size_t i = 20; i < s.size() && IsAsciiDigit(s[i]) && i < 29; ++i, scale /= 10) {
      seconds += (s[i] - '0') * scale;
    }
  }
  return seconds;
}

std::optional<double> ParseYearlessTimestamp(std::string_view line, int year) {
  std::string_view s = WithoutTaskLabel(line);
  // A colour before the bracket (termcolor's CSI "ESC[32m").
  if (s.size() > 2 && s[0] == '\x1b' && s[1] == '[') {
    size_t m = s.find('m', 2);
    if (m == s.npos || m > 10) return std::nullopt;
    s.remove_prefix(m + 1);
  }
  std::string_view month, day, clock;
  if (s.size() >= 16 && s[0] == '[' && s[3] == '/' && s[6] == ' ' &&
      (s[15] == ' ' || s[15] == ']')) {
    month = s.substr(1, 2), day = s.substr(4, 2), clock = s.substr(7, 8);  // detectron2
  } else if (s.size() >= 15 && (s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F') &&
             s[5] == ' ') {
    month = s.substr(1, 2), day = s.substr(3, 2), clock = s.substr(6, 8);  // absl
  } else {
    return std::nullopt;
  }
  if (year < 0 || year > 9999) return std::nullopt;
  // "YYYY-MM-DD HH:MM:SS" in place, not in a std::string (a heap
  // allocation per stamped line), written as "1YYYY-...": 10000 + year
  // gives the year its leading zeros, and the "1" is left out.
  std::array<char, 20> iso{};
  std::to_chars(iso.data(), iso.data() + 5, 10000 + year);
  iso[5] = '-';
  std::copy(month.begin(), month.end(), iso.begin() + 6);
  iso[8] = '-';
  std::copy(day.begin(), day.end(), iso.begin() + 9);
  iso[11] = ' ';
  std::copy(clock.begin(), clock.end(), iso.begin() + 12);
  return ParseIsoTimestamp({iso.data() + 1, iso.size() - 1});
}

std::optional<double> ParseEpochStamp(std::string_view line) {
  std::string_view s = WithoutTaskLabel(line);
  auto read = [](std::string_view at) -> std::optional<double> {
    // 1[5-9] and eight more digits, then not a digit.
    if (at.size() < 10 || at[0] != '1' || at[1] < '5' || at[1] > '9') return std::nullopt;
    for (size_t i = 2; i < 10; ++i)
      if (!IsAsciiDigit(at[i])) return std::nullopt;
    double value = 0;
    size_t end = 10;
    if (end < at.size() && at[end] == '.') {
      ++end;
      while (end < at.size() && IsAsciiDigit(at[end])) ++end;
    }
    if (end < at.size() && IsWordChar(at[end])) return std::nullopt;
    std::from_chars(at.data(), at.data() + end, value);
    return value;
  };
  if (auto first = read(s)) return first;
  for (std::string_view key :
       {"ts", "time", "timestamp", "wall", "wall_time", "unix_time", "time_unix"}) {
    for (size_t at = s.find(key); at != s.npos; at = s.find(key, at + 1)) {
      if (at > 0 && IsWordChar(s[at - 1])) continue;
      size_t i = at + key.size();
      if (i < s.size() && (s[i] == '"' || s[i] == '\'')) ++i;
      if (i < s.size() && s[i] == ' ') ++i;
      if (i >= s.size() || (s[i] != '=' && s[i] != ':')) continue;
      ++i;
      if (i < s.size() && s[i] == ' ') ++i;
      if (auto value = read(s.substr(i))) return value;
    }
  }
  return std::nullopt;
}

std::optional<double> ParseClockStamp(std::string_view line) {
  std::string_view s = WithoutTaskLabel(line);
  bool bracket = !s.empty() && s[0] == '[';
  if (bracket) s.remove_prefix(1);
  if (s.size() < 9 || s[2] != ':' || s[5] != ':') return std::nullopt;
  for (size_t i : {0, 1, 3, 4, 6, 7}) {
    if (!IsAsciiDigit(s[i])) return std::nullopt;
  }
  int h = TwoDigits(s, 0), m = TwoDigits(s, 3), sec = TwoDigits(s, 6);
  if (h > 23 || m > 59 || sec > 60) return std::nullopt;
  double value = h * 3600.0 + m * 60.0 + sec;
  size_t i = 8;
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && IsAsciiDigit(s[i + 1])) {
    double scale = 0.1;
    for (++i; i < s.size() && IsAsciiDigit(s[i]) && scale > 1e-7; ++i, scale /= 10)
      value += (s[i] - '0') * scale;
  }
  if (bracket) {
    if (i >= s.size() || s[i] != ']') return std::nullopt;
    ++i;
  }
  if (i >= s.size() || (s[i] != ' ' && s[i] != '\t')) return std::nullopt;
  return value;
}

std::optional<double> DateClock(double clock, double reference, double max_ahead) {
  constexpr double kDay = 86400;
  double t = std::floor(reference / kDay) * kDay + clock;
  if (t < reference - 3600) t += kDay;  // past midnight
  if (t - reference > max_ahead) return std::nullopt;
  return t;
}

std::optional<double> FindIsoTimestamp(std::string_view line) {
  // Look for "YYYY-" with a plausible century, then validate the rest; the
  // dashes are found with find (memchr), as most lines have none.
  for (size_t dash = line.find('-', 4); dash != line.npos && dash + 15 <= line.size();
       dash = line.find('-', dash + 1)) {
    size_t pos = dash - 4;
    if (line[pos] == '1' || line[pos] == '2') {
      if (auto t = ParseIsoTimestamp(line.substr(pos))) return t;
    }
  }
  return std::nullopt;
}

namespace {

// The length of the line's "N: " label (srun -l), 0 without one; the task
// number in `task` when given.
size_t TaskLabelLength(std::string_view line, int* task) {
  size_t i = 0;
  while (i < line.size() && i < 7 && line[i] == ' ') ++i;  // srun right-aligns labels
  size_t start = i;
  while (i < line.size() && IsAsciiDigit(line[i]) && i - start < 6) ++i;
  if (i == start || i + 1 >= line.size() || line[i] != ':' || line[i + 1] != ' ') return 0;
  if (task) {
    // At most 6 digits: no overflow (from_chars was a tenth of a step line's rank reading).
    *task = 0;
    for (size_t d = start; d < i; ++d) *task = *task * 10 + (line[d] - '0');
  }
  return i + 2;
}

}  // namespace

std::optional<int> TaskLabel(std::string_view line) { return SplitTaskLabel(line).first; }

std::string_view WithoutTaskLabel(std::string_view line) {
  return line.substr(TaskLabelLength(line, nullptr));
}

std::pair<std::optional<int>, std::string_view> SplitTaskLabel(std::string_view line) {
  int task = 0;
  const size_t length = TaskLabelLength(line, &task);
  if (length == 0) return {std::nullopt, line};
  return {task, line.substr(length)};
}

namespace {

// MaxText MaxText/train.py (2024-2025), max_logging.log:
//   f"completed step: {step}, seconds: {t:.3f}, TFLOP/s/device: ..., loss: ..."
bool ParseMaxTextStepInto(std::string_view line, StepSample& out) {
  const size_t at = FindText(line, "completed step:");
  if (at == line.npos) return false;
  // A job summary's "Last completed step: N of steps=T" reports the last
  // step again after the end; it is no step of its own (counted as one, it
  // dated the last step at the cancel and hid the hang before it).
  if (at >= 5 && EqualsNoCase(line.substr(at - 5, 5), "last ")) return false;
  std::string_view rest = line.substr(at + std::string_view("completed step:").size());
  auto step = TakeInt(rest);
  if (!step || *step < 0) return false;
  out.step = *step;
  if (const size_t seconds_at = FindText(rest, "seconds:"); seconds_at != rest.npos) {
    rest.remove_prefix(seconds_at + std::string_view("seconds:").size());
    if (auto seconds = TakeDouble(rest); seconds && *seconds >= 0) out.seconds = seconds;
  }
  return true;
}

}  // namespace

std::optional<StepSample> ParseMaxTextStep(std::string_view line) {
  std::optional<StepSample> out(std::in_place);
  if (!ParseMaxTextStepInto(line, *out)) out.reset();
  return out;
}

// Megatron-LM megatron/training/training.py training_log (core 0.x):
//   log_string = f" [{time}] iteration {iteration:8d}/{train_iters:8d} |" ... " elapsed time per
//   iteration (ms): {t:.1f} |"; NeMo 2 launches Megatron's loop and prints the same.
std::optional<StepSample> ParseMegatronStep(std::string_view line) {
  auto rest = After(line, "iteration");
  if (!rest) return std::nullopt;
  auto step = TakeInt(*rest);
  SkipSpaces(*rest);
  if (!step || *step < 0 || rest->empty() || rest->front() != '/') return std::nullopt;
  rest->remove_prefix(1);
  auto total = TakeInt(*rest);
  // Megatron prints a positive train_iters; "1/-11" is no iteration line.
  if (*step < 1 || (total && *total < 1)) return std::nullopt;
  // Megatron counts iterations from 1; steps here are 0-indexed.
  StepSample sample = MakeStepSample(*step - 1, std::nullopt, total, FindIsoTimestamp(line));
  if (auto ms_text = After(*rest, "elapsed time per iteration (ms):")) {
    if (auto ms = TakeDouble(*ms_text); ms && *ms >= 0) sample.seconds = *ms / 1000.0;
  }
  return sample;
}

// torchtitan torchtitan/components/metrics.py MetricsProcessor.log (2025):
//   f"{color.red}step: {step:2}  {color.green}loss: {loss:8.5f}  ..." with ANSI
// colours (utils.Color) unless disable_color_printing (utils.NoColor); older
// train.py printed the same without grad_norm. "validate step:" is evaluation.
std::optional<StepSample> ParseTorchTitanStep(std::string_view line) {
  size_t at = line.find("step:");
  if (at == line.npos) return std::nullopt;
  if (ContainsNoCase(line.substr(0, at).substr(at > 10 ? at - 10 : 0), "validat"))
    return std::nullopt;
  std::optional<std::string_view> rest = line.substr(at + 5);
  auto step = TakeInt(*rest);
  if (!step || *step < 0 || rest->find("loss:") == rest->npos) return std::nullopt;
  return MakeStepSample(*step, std::nullopt, std::nullopt, FindIsoTimestamp(line));
}

namespace {

// tqdm's {elapsed}: "[MM:SS<" or "[H:MM:SS<" (tqdm/std.py format_interval).
std::optional<double> TqdmElapsed(std::string_view piece) {
  const size_t lt = piece.rfind('<');
  if (lt == std::string_view::npos) return std::nullopt;
  const size_t open = piece.rfind('[', lt);
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view clock = piece.substr(open + 1, lt - open - 1);
  double seconds = 0;
  int fields = 0;
  while (!clock.empty()) {
    const size_t colon = clock.find(':');
    const std::string_view field = clock.substr(0, colon);
    if (field.empty() || field.size() > 3 ||
        !std::all_of(field.begin(), field.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    seconds = seconds * 60 + std::stod(std::string(field));
    ++fields;
    if (colon == std::string_view::npos) break;
    clock.remove_prefix(colon + 1);
  }
  if (fields < 2 || fields > 3) return std::nullopt;
  return seconds;
}

}  // namespace

std::optional<double> TqdmBurstSeconds(std::string_view line) {
  std::optional<double> previous;
  double span = 0;
  int updates = 0;
  size_t start = 0;
  while (start <= line.size()) {
    size_t cr = line.find('\r', start);
    const std::string_view piece =
        line.substr(start, cr == std::string_view::npos ? std::string_view::npos : cr - start);
    if (auto elapsed = TqdmElapsed(piece)) {
      ++updates;
      // A bar that started over within the burst (the next epoch's) adds
      // its own time from 0.
      if (previous) span += *elapsed >= *previous ? *elapsed - *previous : *elapsed;
      previous = elapsed;
    }
    if (cr == std::string_view::npos) break;
    start = cr + 1;
  }
  if (updates < 2 || span <= 0) return std::nullopt;
  return span;
}

bool IsLoggingDict(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.size() < 8 || line.front() != '{' || line.back() != '}') return false;
  for (std::string_view key : {"'loss'", "\"loss\"", "'epoch'", "\"epoch\"", "'learning_rate'",
                               "\"learning_rate\"", "'train_loss'", "\"train_loss\""}) {
    if (line.find(key) != std::string_view::npos) return true;
  }
  return false;
}

// tqdm's default bar: "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining},
// {rate_fmt}{postfix}]" (tqdm/std.py format_meter, tqdm 4.x). HF Trainer's ProgressCallback opens
// it as tqdm(total=state.max_steps) with no description and writes its log
// dicts with training_bar.write(str(logs)); those dicts carry no step (the
// step goes only to state.log_history: transformers trainer.py `log`,
// trainer_callback.py ProgressCallback.on_log, 4.x), so the bar is the step.
// accelerate/diffusers example scripts: tqdm(range(max_train_steps),
// desc="Steps") with set_postfix(step_loss=..., lr=...) (diffusers
// examples/*/train_*.py).
// `done` may be 0 only with allow_zero (a bar just opened: step -1).
std::optional<StepSample> TqdmPiece(std::string_view piece, bool allow_zero) {
  auto count = FindBarCount(piece, 0);
  if (!count || !count->total || *count->total <= 1 || count->done < (allow_zero ? 0 : 1))
    return std::nullopt;
  std::string_view description = piece.substr(0, count->start);
  if (NotTrainingBar(description) || description.find("Epoch ") != description.npos)
    return std::nullopt;
  auto seconds = BarSeconds(count->after);
  // A bar has its rate bracket ("?it/s" when just opened); "5/10 done" is no bar.
  if (!seconds && !(count->done == 0 && count->after.find("?it/s") != count->after.npos))
    return std::nullopt;
  // tqdm shows how many are done ("60/400"): the last finished step is 59.
  return MakeStepSample(count->done - 1, seconds, count->total, std::nullopt);
}

std::optional<StepSample> ParseTqdmStep(std::string_view line) {
  return LastBarUpdate(line, [](std::string_view piece) { return TqdmPiece(piece, false); });
}

// Lightning TQDMProgressBar (lightning/pytorch/callbacks/progress/tqdm_progress.py,
// 1.x-2.x): BAR_FORMAT "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining},
// {rate_noinv_fmt}{postfix}]", set_description(f"Epoch {trainer.current_epoch}")
// in on_train_epoch_start, which also resets the bar to the epoch's batches;
// n = batch_idx + 1. NeMo's MegatronProgressBar (nemo/utils/callbacks,
// 1.x) keeps the description with bar_format "{desc} {n_fmt}/{total_fmt}{postfix}".
std::optional<StepSample> LightningPiece(std::string_view piece, bool allow_zero) {
  size_t at = piece.find("Epoch ");
  if (at == piece.npos || (at > 0 && IsWordChar(piece[at - 1]))) return std::nullopt;
  std::string_view rest = piece.substr(at + 6);
  auto epoch = TakeInt(rest);
  // "Epoch 1/3:", a hand-written loop's bar: the epoch of epochs planned.
  std::optional<int64_t> epochs;
  if (epoch && !rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
    epochs = TakeInt(rest);
    if (!epochs) return std::nullopt;
  }
  if (!epoch || *epoch < 0 || rest.empty() || (rest.front() != ':' && rest.front() != ' '))
    return std::nullopt;
  size_t from = piece.size() - rest.size();
  auto count = FindBarCount(piece, from);
  if (!count || count->done < (allow_zero ? 0 : 1)) return std::nullopt;
  if (count->total && *count->total < count->done) return std::nullopt;
  if (epochs) {
    // A composite position; StepFilter places it (1-based epochs).
    StepSample sample = MakeStepSample(count->done, BarSeconds(count->after), count->total, {});
    sample.epoch = epoch;
    sample.epochs = epochs;
    return sample;
  }
  // Huge epoch or batch counts (junk, not a bar) must not overflow the step.
  int64_t offset = 0, step = 0;
  if (count->total && __builtin_mul_overflow(*epoch, *count->total, &offset)) return std::nullopt;
  if (__builtin_add_overflow(offset, count->done - 1, &step)) return std::nullopt;
  return MakeStepSample(step, BarSeconds(count->after), std::nullopt, std::nullopt);
}

std::optional<StepSample> ParseLightningStep(std::string_view line) {
  return LastBarUpdate(line, [](std::string_view piece) { return LightningPiece(piece, false); });
}

std::optional<int64_t> BarOpenedAt(StepProfile profile, std::string_view line) {
  if (profile != StepProfile::kHuggingFace && profile != StepProfile::kLightning)
    return std::nullopt;
  size_t pos = 0;
  while (pos <= line.size()) {
    size_t cr = line.find('\r', pos);
    std::string_view piece = line.substr(pos, cr == line.npos ? line.npos : cr - pos);
    if (piece.find("\x1b[A") == piece.npos) {  // the bar at position 0
      auto sample = profile == StepProfile::kHuggingFace ? TqdmPiece(piece, true)
                                                         : LightningPiece(piece, true);
      if (sample) return sample->step + 1;
    }
    if (cr == line.npos) break;
    pos = cr + 1;
  }
  return std::nullopt;
}

// DeepSpeed (deepspeed/runtime/pipe/engine.py train_batch, 0.3-0.16):
//   f'steps: {self.global_steps} loss: {loss:0.4f} ... iter time (s): {t:0.3f} samples/sec: ...'
// printed after global_steps counted the step; and deepspeed/runtime/engine.py
// _report_progress (0.3-0.16), called with global_steps + 1, through log_dist:
//   "[Rank 0] step={step}, skipped={self.skipped_steps}, lr={lr}, mom={mom}"
std::optional<StepSample> ParseDeepSpeedStep(std::string_view line) {
  std::optional<int64_t> done;
  std::optional<double> seconds;
  size_t pipe = line.find("steps: ");
  size_t engine = line.find("step=");
  if (pipe != line.npos && line.find(" loss: ", pipe) != line.npos) {
    std::string_view rest = line.substr(pipe + 7);
    done = TakeInt(rest);
    if (auto t = After(rest, "iter time (s):")) {
      if (auto value = TakeDouble(*t); value && *value >= 0) seconds = value;
    }
  } else if (engine != line.npos && (engine == 0 || !IsWordChar(line[engine - 1])) &&
             line.find(", skipped=", engine) != line.npos) {
    std::string_view rest = line.substr(engine + 5);
    done = TakeInt(rest);
  }
  if (!done || *done < 1) return std::nullopt;
  return MakeStepSample(*done - 1, seconds, std::nullopt, FindIsoTimestamp(line));
}

// CLU metric_writers/logging_writer.py LoggingWriter.write_scalars (CLU
// 0.0.x, used by T5X t5x/trainer.py and the Flax examples):
//   logging.info("[%d]%s %s", step, collection_str, "k=v, k=v")
// under absl's "I0101 12:00:00.123456 pid logging_writer.py:NN] " prefix.
// Seconds per step from "timing/steps_per_second" (T5X models.py).
std::optional<StepSample> ParseT5xStep(std::string_view line) {
  auto rest = After(line, "logging_writer.py:");
  if (!rest) return std::nullopt;
  auto body = After(*rest, "] [");
  if (!body) return std::nullopt;
  auto step = TakeInt(*body);
  if (!step || *step < 0 || body->empty() || body->front() != ']') return std::nullopt;
  if (body->find('=') == body->npos || body->find("Got ") != body->npos) return std::nullopt;
  StepSample sample = MakeStepSample(*step, std::nullopt, std::nullopt, std::nullopt);
  if (auto rate_text = After(*body, "timing/steps_per_second=")) {
    if (auto rate = TakeDouble(*rate_text); rate && *rate > 0) sample.seconds = 1.0 / *rate;
  }
  return sample;
}

namespace {

bool IsCounterSeparator(char c) {
  return c == ' ' || c == ':' || c == '=' || c == '#' || c == '\t' || c == '[' || c == '(';
}

// The number right after `keyword` at `at` in `line` (up to three separators
// between: "step 3", "Step [17/60]", "iter=5", "epoch: 2"), with "/total";
// nullopt when the keyword is part of a word or no whole number follows.
struct Counter {
  int64_t value = 0;
  std::optional<int64_t> total;
  std::string_view rest;  // after the number (and its total)
};
std::optional<Counter> CounterAt(std::string_view line, size_t at, size_t keyword_size) {
  if (at > 0 && IsWordChar(line[at - 1])) return std::nullopt;
  std::string_view rest = line.substr(at + keyword_size);
  size_t separators = 0;
  while (separators < rest.size() && separators < 3 && IsCounterSeparator(rest[separators]))
    ++separators;
  if (separators == 0 || separators == rest.size() || !IsAsciiDigit(rest[separators]))
    return std::nullopt;
  rest.remove_prefix(separators);
  auto value = TakeInt(rest);
  if (!value || *value < 0 || (!rest.empty() && (IsWordChar(rest.front()) || rest.front() == '.')))
    return std::nullopt;
  Counter counter{*value, std::nullopt, rest};
  std::string_view total_text = rest;
  SkipSpaces(total_text);
  if (total_text.substr(0, 3) == "of ")
    total_text.remove_prefix(2);
  else if (!total_text.empty() && total_text.front() == '/')
    total_text.remove_prefix(1);
  else
    return counter;
  if (auto total = TakeInt(total_text); total && *total >= *value && *total > 0) {
    counter.total = total;
    counter.rest = total_text;
  }
  return counter;
}

// The last "epoch N" (N/M) before `before_end` in the folded line.
std::optional<Counter> EpochBefore(std::string_view line, std::string_view folded,
                                   size_t before_end) {
  std::optional<Counter> found;
  for (size_t at = folded.find("epoch"); at != folded.npos && at < before_end;
       at = folded.find("epoch", at + 1)) {
    if (auto counter = CounterAt(line, at, 5)) found = counter;
  }
  return found;
}

}  // namespace

// A plain loop's own print, e.g. tests/fixtures/real/pytorch/train_ddp.py's
// f"step {step} loss {loss:.4f}". The keyword stands alone (not "substep",
// "max_steps") and not after eval/valid/test; the line needs a metric or a
// total so that "step 3 of preprocessing" is no step. An "epoch N" before
// the counter makes the position composite ("epoch 2 iter 17/60",
// "Epoch [2/3], Step [17/60]", "Epoch 1 Batch 40/60"): the counter is then
// the epoch's.
std::optional<StepSample> ParseGenericStep(std::string_view line) {
  // Lower-cased once per line, so every keyword search below is a plain
  // find (memchr-fast): this parser sees most lines of a log, and a
  // per-character case-folding search was half of `jobmon triage`'s time.
  thread_local std::string lowered;
  lowered.assign(line);
  for (char& c : lowered) c = AsciiLower(c);
  const std::string_view folded = lowered;
  static constexpr std::string_view kKeywords[] = {"step", "iteration", "iter", "batch"};
  static constexpr std::string_view kMetrics[] = {
      "loss", "lr", "learning", "ppl", "perplexity", "acc", "grad", "tok", "throughput", "samples"};
  for (std::string_view keyword : kKeywords) {
    for (size_t at = folded.find(keyword); at != folded.npos; at = folded.find(keyword, at + 1)) {
      auto counter = CounterAt(line, at, keyword.size());
      if (!counter) continue;
      std::string_view before = line.substr(0, at);
      if (NotTrainingBar(before.substr(before.size() > 12 ? before.size() - 12 : 0))) continue;
      auto epoch = EpochBefore(line, folded, at);
      // "batch 32" is as often a size as a position: only with an epoch or a total.
      if (keyword == "batch" && !epoch && !counter->total) continue;
      StepSample sample =
          MakeStepSample(counter->value, std::nullopt, counter->total, std::nullopt);
      if (epoch) {
        sample.epoch = epoch->value;
        sample.epochs = epoch->total;
      }
      const std::string_view folded_rest = folded.substr(line.size() - counter->rest.size());
      bool metric = std::any_of(std::begin(kMetrics), std::end(kMetrics), [&](std::string_view w) {
        return folded_rest.find(w) != folded_rest.npos;
      });
      if (!metric && !sample.total_steps) continue;
      sample.timestamp = FindIsoTimestamp(line);
      sample.seconds = FindStepSeconds(line);
      return sample;
    }
  }
  return std::nullopt;
}

std::optional<double> FindStepSeconds(std::string_view line) {
  // tqdm's rate, "1.02s/it" or "10.5it/s" (tqdm/std.py format_meter).
  for (std::string_view unit : {std::string_view("s/it"), std::string_view("it/s")}) {
    size_t at = line.find(unit);
    if (at == line.npos || at == 0 ||
        (at + unit.size() < line.size() && IsWordChar(line[at + unit.size()])))
      continue;
    size_t start = at;
    while (start > 0 && (IsAsciiDigit(line[start - 1]) || line[start - 1] == '.')) --start;
    std::string_view number = line.substr(start, at - start);
    auto rate = TakeDouble(number);
    if (!rate || *rate <= 0) continue;
    return unit == "s/it" ? *rate : 1.0 / *rate;
  }
  thread_local std::string lowered;
  lowered.assign(line);
  for (char& c : lowered) c = AsciiLower(c);
  const std::string_view folded = lowered;
  for (size_t at = folded.find("time"); at != folded.npos; at = folded.find("time", at + 1)) {
    if (at > 0 && IsWordChar(folded[at - 1]) && folded[at - 1] != '_') continue;
    std::string_view rest = line.substr(at + 4);
    // Megatron's "elapsed time per iteration (ms): X", DeepSpeed's "iter time (s): X".
    double bare_scale = 1.0;
    if (auto per = folded.substr(at + 4); per.substr(0, 14) == " per iteration") {
      rest.remove_prefix(14);
    }
    std::string_view unit = rest;
    SkipSpaces(unit);
    if (unit.substr(0, 4) == "(ms)") {
      bare_scale = 0.001;
      rest = unit.substr(4);
    } else if (unit.substr(0, 3) == "(s)") {
      rest = unit.substr(3);
    }
    size_t separators = 0;
    while (separators < rest.size() && separators < 3 &&
           (rest[separators] == ' ' || rest[separators] == ':' || rest[separators] == '='))
      ++separators;
    if (separators == 0 || separators == rest.size() || !IsAsciiDigit(rest[separators])) continue;
    rest.remove_prefix(separators);
    size_t end = 0;
    while (end < rest.size() && (IsAsciiDigit(rest[end]) || rest[end] == '.')) ++end;
    // A clock ("time 12:00:01", "time 2026-11-26") is no duration.
    if (end < rest.size() && (rest[end] == ':' || rest[end] == '-')) continue;
    if (auto seconds = ParseDuration(rest.substr(0, end), rest.substr(end), bare_scale);
        seconds && *seconds > 0) {
      return seconds;
    }
  }
  return std::nullopt;
}

std::optional<double> ParseDuration(std::string_view number, std::string_view after,
                                    double bare_scale) {
  std::string_view text = number;
  auto value = TakeDouble(text);
  if (!value || *value < 0) return std::nullopt;
  SkipSpaces(text);
  if (text.empty()) {
    text = after;
    SkipSpaces(text);
  }
  auto unit_is = [&](std::string_view unit) {
    return text.substr(0, unit.size()) == unit &&
           (text.size() == unit.size() || !IsWordChar(text[unit.size()]));
  };
  if (unit_is("ms") || unit_is("msec") || unit_is("milliseconds")) return *value / 1000.0;
  if (unit_is("us") || unit_is("µs")) return *value / 1e6;
  if (unit_is("min") || unit_is("minutes")) return *value * 60.0;
  if (unit_is("s") || unit_is("sec") || unit_is("secs") || unit_is("seconds")) return *value;
  return *value * bare_scale;
}

bool ParseStepInto(StepProfile profile, std::string_view line, StepSample& out) {
  // MaxText's, a cluster's most common step line, is written in place; the
  // others' copied.
  if (profile == StepProfile::kMaxText) return ParseMaxTextStepInto(line, out);
  auto sample = ParseStep(profile, line);
  if (sample) out = *sample;
  return sample.has_value();
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
    case StepProfile::kLightning:
      return ParseLightningStep(line);
    case StepProfile::kDeepSpeed:
      return ParseDeepSpeedStep(line);
    case StepProfile::kT5x:
      return ParseT5xStep(line);
    case StepProfile::kGeneric:
      return ParseGenericStep(line);
    case StepProfile::kLearned:
    case StepProfile::kPulse:
      return std::nullopt;  // learned per job (TemplateLearner), not one line's
  }
  return std::nullopt;
}

const std::vector<StepProfile>& AutoDetectedProfiles() {
  // Specific formats first; tqdm bars after Lightning's (whose "Epoch N" bars
  // the tqdm parser leaves alone); the generic counter last, as the weakest.
  static const std::vector<StepProfile> kProfiles = {
      StepProfile::kMaxText,     StepProfile::kMegatron, StepProfile::kTorchTitan,
      StepProfile::kDeepSpeed,   StepProfile::kT5x,      StepProfile::kLightning,
      StepProfile::kHuggingFace, StepProfile::kGeneric};
  return kProfiles;
}

std::optional<DetectedStep> DetectStep(std::string_view line) {
  for (StepProfile profile : AutoDetectedProfiles()) {
    if (auto sample = ParseStep(profile, line)) return DetectedStep{profile, *sample};
  }
  return std::nullopt;
}

}  // namespace jobmon::triage
