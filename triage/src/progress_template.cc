#include "jobmon/triage/progress_template.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "jobmon/common/ascii.h"
#include "jobmon/triage/rank_progress.h"

namespace jobmon::triage {
namespace {

// A letter or '_': what a word before a number is made of.
bool IsLetter(char c) { return IsAsciiLetter(c) || c == '_'; }

// The word before a number ("loss" in "loss: 0.5", "epoch" in "ep=2" is "ep").
std::string WordBefore(std::string_view line, size_t at) {
  size_t end = at;
  while (end > 0 && at - end < 3 && !IsLetter(line[end - 1]) && !IsAsciiDigit(line[end - 1])) --end;
  size_t start = end;
  while (start > 0 && end - start < 24 && IsLetter(line[start - 1])) --start;
  std::string word(line.substr(start, end - start));
  for (char& c : word) c = AsciiLower(c);
  return word;
}

bool NamesProgress(const std::string& word) {
  for (std::string_view key : {"step", "iter", "batch", "epoch", "it", "ep", "b", "update"}) {
    if (word == key || (key.size() > 2 && word.find(key) != word.npos)) return true;
  }
  return false;
}

}  // namespace

namespace {

// The line without its rank prefix and tqdm redraws; nullopt for another
// rank's line.
std::optional<std::string_view> Rank0Text(std::string_view line) {
  if (auto task = TaskLabel(line)) {
    if (*task != 0) return std::nullopt;
    line = WithoutTaskLabel(line);
  }
  if (auto prefix = TorchrunPrefix(line)) {
    if (prefix->first != 0) return std::nullopt;
    line = prefix->second;
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (size_t cr = line.rfind('\r'); cr != line.npos) line = line.substr(cr + 1);
  return line;
}

// Walks a line as its template reads it: `literal(c)` for each character of
// the shape but '#' (whitespace runs once, as ' '), `number(i, j, integer)`
// for each number at [i, j). Either returns false to stop. The one
// definition of the template, for learning (MaskLine) and matching.
template <typename Literal, typename Number>
bool WalkShape(std::string_view line, Literal literal, Number number) {
  const size_t n = std::min<size_t>(line.size(), 512);
  bool space = true;  // leading spaces dropped
  for (size_t i = 0; i < n;) {
    char c = line[i];
    if (IsAsciiDigit(c)) {
      size_t j = i;
      while (j < n && IsAsciiDigit(line[j])) ++j;
      bool integer = true;
      if (j + 1 < n && line[j] == '.' && IsAsciiDigit(line[j + 1])) {
        integer = false;
        for (++j; j < n && IsAsciiDigit(line[j]);) ++j;
      }
      if (j + 1 < n && (line[j] == 'e' || line[j] == 'E') &&
          (IsAsciiDigit(line[j + 1]) || ((line[j + 1] == '-' || line[j + 1] == '+') && j + 2 < n &&
                                         IsAsciiDigit(line[j + 2])))) {
        integer = false;
        for (j += 2; j < n && IsAsciiDigit(line[j]);) ++j;
      }
      if (!number(i, j, integer)) return false;
      space = false;
      i = j;
      continue;
    }
    if (c == ' ' || c == '\t') {
      if (!space && !literal(' ')) return false;
      space = true;
      ++i;
      continue;
    }
    space = false;
    if (!literal(c)) return false;
    ++i;
  }
  return true;
}

struct NumberFacts {
  bool field = false;  // not part of a word ("v100")
  double value = 0;
  bool clock = false;
};

NumberFacts ReadNumber(std::string_view line, size_t i, size_t j) {
  NumberFacts facts;
  const size_t n = std::min<size_t>(line.size(), 512);
  if (i > 0 && IsLetter(line[i - 1])) return facts;
  facts.field = true;
  std::from_chars(line.data() + i, line.data() + j, facts.value);
  bool joined_before = i > 1 && IsAsciiDigit(line[i - 2]) &&
                       (line[i - 1] == ':' || line[i - 1] == '-' || line[i - 1] == ',');
  bool joined_after = j + 1 < n && (line[j] == ':' || line[j] == '-') && IsAsciiDigit(line[j + 1]);
  if (i > 0 && line[i - 1] == '-' && !joined_before) facts.value = -facts.value;
  facts.clock = joined_before || joined_after;
  return facts;
}

}  // namespace

std::optional<MaskedLine> MaskLine(std::string_view line) {
  auto text = Rank0Text(line);
  if (!text) return std::nullopt;
  line = *text;
  MaskedLine m;
  WalkShape(
      line,
      [&](char c) {
        m.shape += c;
        return true;
      },
      [&](size_t i, size_t j, bool integer) {
        NumberFacts facts = ReadNumber(line, i, j);
        if (facts.field) {
          m.numbers.push_back(facts.value);
          m.clock.push_back(facts.clock);
          m.integer.push_back(integer);
          m.before.push_back(WordBefore(line, i));
        }
        m.shape += '#';
        return true;
      });
  while (!m.shape.empty() && m.shape.back() == ' ') m.shape.pop_back();
  if (m.shape.empty()) return std::nullopt;
  return m;
}

std::vector<size_t> TemplateLearner::Counters(const Candidate& c) const {
  const int moves = c.count - 1;
  if (moves < kMinRepeats - 1) return {};
  std::optional<size_t> inner;
  auto better = [&](size_t a, size_t b) {  // is field a the better inner counter than b
    const Field &fa = c.fields[a], &fb = c.fields[b];
    if (fa.integer != fb.integer) return fa.integer;
    bool na = NamesProgress(fa.before), nb = NamesProgress(fb.before);
    if (na != nb) return na;
    return fa.ups > fb.ups;
  };
  for (size_t k = 0; k < c.fields.size(); ++k) {
    const Field& f = c.fields[k];
    if (f.clock) continue;
    // Mostly up; the rare restart (an epoch's counter) only once enough
    // moves show it is rare: a reading that wanders is no counter.
    bool advances = f.ups >= std::max(2.0, 0.6 * moves) &&
                    (f.downs == 0 || (moves >= 10 && f.downs <= 0.25 * moves));
    if (advances && (!inner || better(k, *inner))) inner = k;
  }
  if (!inner) return {};
  const Field& in = c.fields[*inner];
  std::optional<size_t> outer;
  for (size_t k = 0; k < c.fields.size(); ++k) {
    const Field& f = c.fields[k];
    if (k == *inner || f.clock || !f.integer || !in.integer || f.downs != 0 || f.changes == 0)
      continue;
    // An epoch changes when the inner counter restarts, and no more often.
    if (f.changes > in.downs + 1 || f.changes >= in.changes || f.last > 1e6) continue;
    if (!outer || NamesProgress(f.before)) outer = k;
  }
  if (outer) return {*outer, *inner};
  return {*inner};
}

bool TemplateLearner::Steady(const Candidate& c) const {
  if (c.count < kMinPulseRepeats || c.gaps.size() < static_cast<size_t>(kMinPulseRepeats - 1))
    return false;
  // A pulse has numbers that change (a clock, a counter, a reading): a
  // line repeated verbatim is a message, not a heartbeat.
  if (std::none_of(c.fields.begin(), c.fields.end(), [](const Field& f) { return f.changes > 0; }))
    return false;
  std::vector<double> gaps = c.gaps;
  std::sort(gaps.begin(), gaps.end());
  double median = gaps[gaps.size() / 2];
  double high = gaps[std::min(gaps.size() - 1, static_cast<size_t>(0.99 * gaps.size()))];
  return median > 0 && high <= 5 * median;
}

void TemplateLearner::Offer(std::string_view line, double at) {
  if (adopted_) return;
  auto m = MaskLine(line);
  if (!m || m->shape.size() < 4) return;
  auto it = candidates_.find(m->shape);
  if (it == candidates_.end()) {
    if (candidates_.size() >= kMaxTemplates) {
      // Full of one-off lines: make room by dropping one seen once.
      auto once = std::find_if(candidates_.begin(), candidates_.end(), [&](const auto& entry) {
        return entry.second.count <= 1 && entry.first != learned_shape_;
      });
      if (once == candidates_.end()) return;
      candidates_.erase(once);
    }
    Candidate c;
    c.count = 1;
    c.last_at = at;
    for (size_t k = 0; k < m->numbers.size(); ++k) {
      c.fields.push_back({m->numbers[k], 0, 0, 0, m->clock[k], m->integer[k], m->before[k]});
    }
    candidates_.emplace(std::move(m->shape), std::move(c));
    return;
  }
  Candidate& c = it->second;
  if (c.fields.size() != m->numbers.size()) return;
  for (size_t k = 0; k < c.fields.size(); ++k) {
    Field& f = c.fields[k];
    double v = m->numbers[k];
    if (v > f.last) ++f.ups;
    if (v < f.last) ++f.downs;
    if (v != f.last) ++f.changes;
    f.integer = f.integer && m->integer[k];
    f.last = v;
  }
  double gap = at - c.last_at;
  if (gap >= 0) {
    if (c.gaps.size() < kGapRing) {
      c.gaps.push_back(gap);
    } else {
      c.gaps[c.next_gap] = gap;
      c.next_gap = (c.next_gap + 1) % kGapRing;
    }
  }
  c.last_at = at;
  ++c.count;
  // Is this template now the best: a counter beats a pulse, then more occurrences.
  auto learned = candidates_.find(learned_shape_);
  int learned_count = learned == candidates_.end() ? 0 : learned->second.count;
  const bool counter = c.count >= kMinRepeats && !Counters(c).empty();
  if (it->first == learned_shape_ && kind_ == LearnedKind::kCounter && !counter) {
    kind_.reset();  // its number went back: a reading, not a counter
    learned_shape_.clear();
    learned_count = 0;
  }
  if (counter) {
    if (kind_ != LearnedKind::kCounter || c.count > learned_count || it->first == learned_shape_) {
      kind_ = LearnedKind::kCounter;
      learned_shape_ = it->first;
    }
  } else if (kind_ != LearnedKind::kCounter && Steady(c) && c.count > learned_count) {
    kind_ = LearnedKind::kPulse;
    learned_shape_ = it->first;
  }
}

std::optional<LearnedKind> TemplateLearner::kind() const { return kind_; }

bool TemplateLearner::Adopt() {
  if (!kind_ || adopted_) return adopted_;
  auto it = candidates_.find(learned_shape_);
  if (it == candidates_.end()) return false;
  const Candidate& c = it->second;
  if (*kind_ == LearnedKind::kCounter) {
    counters_ = Counters(c);
    if (counters_.empty()) return false;
    size_t inner = counters_.back();
    if (inner + 1 < c.fields.size()) {
      const Field& next = c.fields[inner + 1];
      if (next.changes == 0 && next.integer && next.last > 0 && !next.clock &&
          next.last >= c.fields[inner].last) {
        total_field_ = inner + 1;
      }
    }
  }
  if (c.gaps.size() >= 2) period_ = *std::max_element(c.gaps.begin(), c.gaps.end());
  // The longest literal piece, for a memmem before the whole comparison.
  size_t pos = 0;
  while (pos < learned_shape_.size()) {
    size_t hash = learned_shape_.find('#', pos);
    size_t end = hash == learned_shape_.npos ? learned_shape_.size() : hash;
    std::string_view piece(learned_shape_.data() + pos, end - pos);
    if (piece.find(' ') == piece.npos && piece.size() > anchor_.size()) anchor_ = piece;
    pos = end + 1;
  }
  field_count_ = c.fields.size();
  // What Match need look for on each line: only what the template can hold.
  std::string folded = learned_shape_;
  for (char& ch : folded) ch = AsciiLower(ch);
  has_date_ = folded.find("#-#-#") != folded.npos;
  states_time_ = folded.find("time") != folded.npos || folded.find("s/it") != folded.npos ||
                 folded.find("it/s") != folded.npos;
  adopted_ = true;
  candidates_.clear();
  return true;
}

std::optional<StepSample> TemplateLearner::Match(std::string_view line) {
  if (!adopted_) return std::nullopt;
  if (!anchor_.empty() && line.find(anchor_) == line.npos) return std::nullopt;
  // Compared as it is walked, without building the line's template: this
  // runs on every line of the adopted template (the scanner's whole log).
  auto text = Rank0Text(line);
  if (!text) return std::nullopt;
  const std::string_view shape = learned_shape_;
  size_t at = 0;
  numbers_.clear();
  integer_.clear();
  bool same = WalkShape(
      *text,
      [&](char c) {
        if (at == shape.size()) return c == ' ';  // trailing spaces, which the template drops
        return shape[at++] == c;
      },
      [&](size_t i, size_t j, bool integer) {
        if (at >= shape.size() || shape[at++] != '#') return false;
        NumberFacts facts = ReadNumber(*text, i, j);
        if (facts.field) {
          numbers_.push_back(facts.value);
          integer_.push_back(integer);
        }
        return true;
      });
  if (!same || at != shape.size() || numbers_.size() != field_count_) return std::nullopt;
  StepSample sample;
  if (has_date_) sample.timestamp = FindIsoTimestamp(line);
  if (states_time_) sample.seconds = FindStepSeconds(line);
  if (*kind_ == LearnedKind::kCounter && integer_[counters_.back()]) {
    double inner = numbers_[counters_.back()];
    if (inner < 0 || inner > 9e15) return std::nullopt;
    sample.step = static_cast<int64_t>(inner);
    if (counters_.size() == 2 && numbers_[counters_.front()] >= 0 &&
        numbers_[counters_.front()] < 1e9) {
      sample.epoch = static_cast<int64_t>(numbers_[counters_.front()]);
    }
    if (total_field_ && numbers_[*total_field_] >= inner)
      sample.total_steps = static_cast<int64_t>(numbers_[*total_field_]);
    return sample;
  }
  // A pulse, or a fractional counter (an epoch of 0.25): each forward move is one.
  std::vector<double> position;
  for (size_t k : counters_) position.push_back(numbers_[k]);
  if (counters_.empty() || last_position_.empty() || position > last_position_) ++moves_;
  last_position_ = std::move(position);
  sample.step = moves_;
  return sample;
}

}  // namespace jobmon::triage
