#include "jobmon/triage/rank_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "jobmon/common/ascii.h"
#include "jobmon/common/whole_number.h"
#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {
namespace {

// "rank 3", "Rank: 3", "rank=3", "[Rank 3]" as a word near the start.
std::optional<int> RankField(std::string_view text) {
  const std::string_view window = text.substr(0, kRankFieldWindow);
  // The next 'r' or 'R' from `from` (memchr is vectorised; most lines hold neither near the start).
  auto next_r = [&](size_t from) {
    if (from >= window.size()) return window.size();
    const size_t left = window.size() - from;
    const void* lower = memchr(window.data() + from, 'r', left);
    const void* upper = memchr(window.data() + from, 'R', left);
    const char* first =
        static_cast<const char*>(lower ? (upper && upper < lower ? upper : lower) : upper);
    return first ? static_cast<size_t>(first - window.data()) : window.size();
  };
  for (size_t at = next_r(0); at + 4 < window.size(); at = next_r(at + 1)) {
    if (at > 0 && IsWordChar(window[at - 1])) continue;
    if (AsciiLower(window[at + 1]) != 'a' || AsciiLower(window[at + 2]) != 'n' ||
        AsciiLower(window[at + 3]) != 'k') {
      continue;
    }
    size_t i = at + 4;
    size_t separators = 0;
    while (i < window.size() && (window[i] == ' ' || window[i] == '=' || window[i] == ':') &&
           separators < 3) {
      ++i;
      ++separators;
    }
    if (separators == 0) continue;  // "ranks", "rank0" (a torchrun role is cut before)
    size_t end = i;
    while (end < window.size() && IsAsciiDigit(window[end]) && end - i < 6) ++end;
    if (end == i || (end < window.size() && IsWordChar(window[end]))) continue;
    // "rank 3/8" and "rank 3 of 8" are still rank 3.
    if (auto n = NonNegativeNumber<int>(window.substr(i, end - i))) return n;
  }
  return std::nullopt;
}

// ANSI SGR sequences ("ESC[2m", "ESC[36m", "ESC[0m") at the start.
std::string_view SkipSgr(std::string_view s) {
  while (s.size() > 2 && s[0] == '\x1b' && s[1] == '[') {
    size_t m = 2;
    while (m < s.size() && m < 12 && (IsAsciiDigit(s[m]) || s[m] == ';')) ++m;
    if (m >= s.size() || s[m] != 'm') break;
    s.remove_prefix(m + 1);
  }
  return s;
}

}  // namespace

std::optional<std::pair<int, std::string_view>> TorchrunPrefix(std::string_view line) {
  if (!line.starts_with('[')) return std::nullopt;
  size_t close = line.find("]:");
  if (close == line.npos || close > 40) return std::nullopt;
  size_t digits = close;
  while (digits > 1 && IsAsciiDigit(line[digits - 1])) --digits;
  if (digits == close || digits == 1 || close - digits > 6) return std::nullopt;
  for (size_t i = 1; i < digits; ++i) {
    if (!IsWordChar(line[i]) && line[i] != '-') return std::nullopt;
  }
  auto n = NonNegativeNumber<int>(line.substr(digits, close - digits));
  if (!n) return std::nullopt;
  return std::pair{*n, line.substr(close + 2)};
}

std::optional<RayPrefix> ParseRayPrefix(std::string_view line) {
  std::string_view s = SkipSgr(line);
  if (s.empty() || s[0] != '(') return std::nullopt;
  // The name may hold parentheses of its own (a Ray Data operator's
  // "MapBatches(fn)"): " pid=" ends it.
  size_t pid_at = s.find("pid=");
  if (pid_at == s.npos || pid_at > 200) return std::nullopt;
  if (pid_at > 1 && s[pid_at - 1] != ' ') return std::nullopt;
  RayPrefix p;
  if (pid_at > 1) p.actor = std::string(s.substr(1, pid_at - 2));
  size_t i = pid_at + 4, digits = i;
  while (i < s.size() && IsAsciiDigit(s[i]) && i - digits < 9) ++i;
  auto pid = NonNegativeNumber<int>(s.substr(digits, i - digits));
  if (!pid) return std::nullopt;
  p.pid = *pid;
  if (s.substr(i).starts_with(", ip=")) {
    size_t start = i + 5, end = start;
    while (end < s.size() && (IsAsciiDigit(s[end]) || s[end] == '.' || s[end] == ':' ||
                              (s[end] >= 'a' && s[end] <= 'f') || (s[end] >= 'A' && s[end] <= 'F')))
      ++end;
    if (end == start) return std::nullopt;
    p.ip = std::string(s.substr(start, end - start));
    i = end;
  }
  if (i >= s.size() || s[i] != ')') return std::nullopt;
  std::string_view rest = SkipSgr(s.substr(i + 1));
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  p.rest = rest;
  return p;
}

std::string ToString(const RankId& id) {
  if (id.pid >= 0) {
    std::string who = id.actor.empty() ? fmt::format("pid={}", id.pid)
                                       : fmt::format("{} pid={}", id.actor, id.pid);
    if (id.rank >= 0) who = fmt::format("rank {} ({})", id.rank, who);
    return id.ip.empty() ? who : fmt::format("{} on {}", who, id.ip);
  }
  if (id.rank >= 0) return fmt::format("rank {}", id.rank);
  if (id.task >= 0 && id.local >= 0) return fmt::format("task {} local {}", id.task, id.local);
  if (id.task >= 0) return fmt::format("task {}", id.task);
  return fmt::format("local {}", id.local);
}

std::optional<RankId> LineRank(std::string_view line) {
  RankId id;
  const auto [task, after_label] = SplitTaskLabel(line);
  if (task) {
    id.task = *task;
    line = after_label;
  }
  // Each prefix below starts with its byte ('[', or '(' perhaps after a
  // colour's ESC): most step lines have none, and are not parsed for them.
  const char first = line.empty() ? '\0' : line.front();
  if (first == '[') {
    if (auto prefix = TorchrunPrefix(line)) {
      id.local = prefix->first;
      line = prefix->second;
    }
  }
  if (!line.empty() && (line.front() == '(' || line.front() == '\x1b')) {
    if (auto ray = ParseRayPrefix(line)) {
      id.pid = ray->pid;
      id.actor = std::move(ray->actor);
      id.ip = std::move(ray->ip);
      line = ray->rest;
    }
  }
  if (auto rank = RankField(line)) id.rank = *rank;
  if (id.task < 0 && id.local < 0 && id.rank < 0 && id.pid < 0) return std::nullopt;
  return std::optional<RankId>(std::move(id));
}

bool LeadRank::Admit(const std::optional<RankId>& line_rank) {
  // "no label" and "0" are the same rank: DeepSpeed's "[Rank 0] step=" and
  // its unlabelled timer lines are one view. Compared field by field: most
  // step lines are not the lead's, and a copy of the id costs more than the
  // comparison (every step line asks).
  static const RankId kNone;
  const RankId& named = line_rank ? *line_rank : kNone;
  const int task = std::max(named.task, 0), local = std::max(named.local, 0),
            rank = std::max(named.rank, 0);
  // Ray's actors carry no order of their own (a pid is no rank): among
  // those alike in the numbered fields the first seen leads.
  const auto order = std::tuple(task, local, rank, named.pid >= 0);
  if (!lead_ || order < std::tuple(lead_->task, lead_->local, lead_->rank, lead_->pid >= 0)) {
    lead_ = named;
    lead_->task = task;
    lead_->local = local;
    lead_->rank = rank;
    return true;
  }
  return task == lead_->task && local == lead_->local && rank == lead_->rank &&
         named.pid == lead_->pid && named.actor == lead_->actor && named.ip == lead_->ip;
}

void RankProgress::Offer(const RankId& id, int64_t step, const std::optional<int64_t>& epoch,
                         const std::optional<double>& at, uint64_t line) {
  for (auto known : first_ranks_) {
    if (known->first == id) {
      known->second = Last{step, epoch, at, line};
      return;
    }
  }
  auto found = ranks_.find(id);
  if (found == ranks_.end()) {
    if (full()) return;
    found = ranks_.emplace(id, Last{step, epoch, at, line}).first;
    if (first_ranks_.size() < kScannedRanks) first_ranks_.push_back(found);
    return;
  }
  found->second = Last{step, epoch, at, line};
}

bool IsRayFolded(std::string_view line) {
  // The marker, then perhaps the notice and the colour's reset, at the end.
  static constexpr std::string_view kMarker = "x across cluster]";
  // The marker's last occurrence, found from its ']' with memchr (vectorised;
  // rfind is a byte loop, and almost no line holds the marker).
  size_t at = std::string_view::npos;
  for (const char* p = static_cast<const char*>(memchr(line.data(), ']', line.size())); p;
       p = static_cast<const char*>(memchr(p + 1, ']', line.size() - (p + 1 - line.data())))) {
    const size_t end = static_cast<size_t>(p - line.data()) + 1;
    if (end >= kMarker.size() && line.substr(end - kMarker.size(), kMarker.size()) == kMarker) {
      at = end - kMarker.size();
    }
  }
  if (at == std::string_view::npos || line.size() - at > kMarker.size() + 400) return false;
  size_t digits = at;
  while (digits > 0 && line[digits - 1] >= '0' && line[digits - 1] <= '9') --digits;
  return digits < at && line.substr(0, digits).ends_with(" [repeated ");
}

std::optional<RankProgress::StoppedFirst> RankProgress::Stopped() const {
  if (folded_) return std::nullopt;
  if (ranks_.size() < 2) return std::nullopt;
  auto position = [](const Last& l) { return std::pair{l.epoch.value_or(0), l.step}; };
  auto lowest = ranks_.begin(), highest = ranks_.begin();
  for (auto it = ranks_.begin(); it != ranks_.end(); ++it) {
    if (position(it->second) < position(lowest->second)) lowest = it;
    if (position(it->second) > position(highest->second)) highest = it;
  }
  StoppedFirst s;
  s.of = ranks_.size();
  s.others_step = highest->second.step;
  if (position(lowest->second) < position(highest->second)) {
    s.at = lowest->second;
    for (const auto& [id, last] : ranks_) {
      if (position(last) != position(lowest->second)) continue;
      ++s.count;
      if (s.ranks.size() < kNamed) s.ranks.push_back(id);
    }
    if (!lowest->second.epoch || lowest->second.epoch == highest->second.epoch) {
      s.steps_behind = highest->second.step - lowest->second.step;
    }
  } else {
    // All at one position: told apart only by when their last lines came.
    std::optional<double> first, last;
    for (const auto& [id, l] : ranks_) {
      if (!l.at) return std::nullopt;
      first = first ? std::min(*first, *l.at) : *l.at;
      last = last ? std::max(*last, *l.at) : *l.at;
    }
    if (*last - *first < kSameMomentSeconds) return std::nullopt;
    for (const auto& [id, l] : ranks_) {
      if (*l.at - *first >= kSameMomentSeconds) continue;
      if (s.count == 0) s.at = l;
      ++s.count;
      if (s.ranks.size() < kNamed) s.ranks.push_back(id);
    }
    if (s.count == s.of) return std::nullopt;
    s.steps_behind = 0;
  }
  // How long after theirs the latest rank's last line came.
  for (const auto& [id, l] : ranks_) {
    if (l.at && s.at.at)
      s.seconds_behind = std::max(s.seconds_behind.value_or(0), *l.at - *s.at.at);
  }
  return s;
}

std::string RankProgress::Describe(const StoppedFirst& s,
                                   const std::map<RankId, std::string>& places) {
  std::string who;
  for (const RankId& id : s.ranks) {
    who += (who.empty() ? "" : ", ") + ToString(id);
    if (auto place = places.find(id); place != places.end()) who += " (" + place->second + ")";
  }
  if (s.count > s.ranks.size()) who += fmt::format(" and {} more", s.count - s.ranks.size());
  const size_t others = s.of - s.count;
  std::string where = fmt::format("at step {}", s.at.step);
  if (s.at.epoch) where = fmt::format("at epoch {} step {}", *s.at.epoch, s.at.step);
  std::string gap;
  if (s.steps_behind && *s.steps_behind > 0) {
    gap =
        fmt::format("{} step{} behind the other {} rank{} (at step {})", *s.steps_behind,
                    *s.steps_behind == 1 ? "" : "s", others, others == 1 ? "" : "s", s.others_step);
  } else {
    gap = fmt::format("the same step as the other {} rank{}", others, others == 1 ? "" : "s");
  }
  if (s.seconds_behind && *s.seconds_behind >= 1) {
    gap += fmt::format(", whose last step line came {:.0f}s later", *s.seconds_behind);
  }
  return fmt::format("{} stopped first: {}, {}", who, where, gap);
}

}  // namespace jobmon::triage
