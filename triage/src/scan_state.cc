#include "scan_state.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>
#include <deque>
#include <span>

#include "chunk_reading.h"
#include "jobmon/common/terminal_text.h"
#include "jobmon/common/text_lines.h"
#include "jobmon/triage/line_facts.h"
#include "jobmon/triage/phase_lines.h"
#include "jobmon/triage/progress_template.h"
#include "jobmon/triage/signatures.h"
#include "jobmon/triage/stall_rule.h"
#include "jobmon/triage/step_filter.h"
#include "line_fact_patterns.h"

namespace jobmon::triage {
namespace {

// Classes whose lines on a task count as "a real error" for the heartbeat
// checklist (reference: tracebacks, NCCL errors, SIGKILL before the timeout).
bool IsRealTaskError(const std::string& id) {
  return id == "python-exception" || id == "nccl-timeout" || id == "oom-host" || id == "oom-gpu" ||
         id == "signal-kill" || id == "compile-fail";
}

// Evidence is quoted verbatim, but a control character (C0, DEL, C1 such
// as CSI U+009B) or invalid UTF-8 would corrupt a terminal, Markdown or
// JSON: the project's one sanitiser (terminal_text.h) makes them U+FFFD. A
// multi-byte character cut at the limit is invalid too, and replaced.
std::string Sanitize(std::string_view text) {
  std::string out = TerminalText(text.substr(0, kEvidenceChars));
  if (text.size() > kEvidenceChars) out += "…";
  return out;
}

std::string_view StripCr(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  return line;
}

constexpr size_t kMaxTasks = 4096;
constexpr uint64_t kAccusedWindowLines = 50;
constexpr size_t kMaxOpenTracebacks = 1024;
// A job's own progress line is learned from this many first lines.
constexpr uint64_t kLearnLines = 20000;
constexpr size_t kMaxLauncherRootCauses = 16;

}  // namespace

namespace {

// memchr is vectorised in libc; std::count compiled to a byte loop that was a
// tenth of a scan's time.
uint64_t CountNewlines(const char* from, const char* to) {
  uint64_t count = 0;
  while (from < to) {
    const void* nl = std::memchr(from, '\n', static_cast<size_t>(to - from));
    if (!nl) break;
    ++count;
    from = static_cast<const char*>(nl) + 1;
  }
  return count;
}

}  // namespace

namespace {

// The state of one scan; everything it keeps is bounded.
class ScanState : public ChunkSink {
 public:
  ScanState(const LogScanner::Impl& impl, ScanFacts& facts) : impl_(impl), facts_(facts) {
    facts_.matched_patterns.assign(impl_.patterns.size(), false);
  }

  void Chunk(std::string_view data, const ChunkReading& reading) override {
    if (facts_.head.size() < kHeadLines) CaptureHead(data);
    for (const ChunkReading::Line& line : reading.lines) {
      ids_ = std::span(reading.ids).subspan(line.ids_begin, line.ids_end - line.ids_begin);
      Line(next_line_ + line.index, data.substr(line.start, line.end - line.start), line, reading);
    }
    const uint64_t line_no = next_line_ + reading.newlines;
    facts_.repeated_lines += reading.repeats;
    if (impl_.custom_step) CustomSteps(data);
    if (!learner_.adopted() && next_line_ <= kLearnLines) Learn(data);
    if (learner_.adopted()) LearnedSteps(data);
    CaptureTail(data, line_no);
    next_line_ = line_no;
    facts_.lines = next_line_ - 1;
  }

  void Finish() override {
    // A traceback cut before its exception line (the process was killed
    // while printing it) still says a Python exception happened.
    while (!open_tracebacks_.empty()) CloseTraceback(Weight::kGeneric);
    for (LineRef& raw : raw_tail_) facts_.tail.push_back({raw.line, Sanitize(raw.text)});
    raw_tail_.clear();
    if (!facts_.last_timestamp && facts_.first_timestamp)
      facts_.last_timestamp = facts_.first_timestamp;
  }

 private:
  void CaptureHead(std::string_view data) {
    uint64_t line = next_line_;
    size_t pos = 0;
    while (facts_.head.size() < kHeadLines && pos < data.size()) {
      size_t end = data.find('\n', pos);
      if (end == data.npos) break;
      facts_.head.push_back({line++, Sanitize(StripCr(data.substr(pos, end - pos)))});
      pos = end + 1;
    }
  }

  // The last lines of this chunk, numbered, as printed (cut a byte past
  // kEvidenceChars, so Sanitize still marks a cut): kTailLines are kept, and
  // only those are sanitised, at the end (a chunk's 200 were a twentieth of
  // a large log's scan).
  void CaptureTail(std::string_view data, uint64_t last_line_number_plus_one) {
    std::vector<LineRef> lines;
    size_t end = data.size();
    if (end > 0 && data[end - 1] == '\n')
      --end;
    else
      return;  // a piece of an over-long line: no complete line ends here
    uint64_t number = last_line_number_plus_one - 1;
    while (lines.size() < kTailLines) {
      const void* nl = end == 0 ? nullptr : memrchr(data.data(), '\n', end);
      size_t start = nl ? static_cast<const char*>(nl) - data.data() + 1 : 0;
      lines.push_back(
          {number--,
           std::string(StripCr(data.substr(start, end - start)).substr(0, kEvidenceChars + 1))});
      if (!nl) break;
      end = start - 1;
    }
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) raw_tail_.push_back(std::move(*it));
    while (raw_tail_.size() > kTailLines) raw_tail_.pop_front();
  }

  bool KnownSteps() const {
    for (size_t p = 0; p < facts_.steps.size(); ++p) {
      if (p != static_cast<size_t>(StepProfile::kLearned) && facts_.steps[p].count() > 0)
        return true;
    }
    return false;
  }

  // The job's own progress line, learned from the first kLearnLines lines
  // when no known format has a step there (the monitor learns the same way:
  // monitor/src/progress/job_progress.cc); a line's "time" is its own stamp, else its
  // number (offline, only the counter matters).
  void Learn(std::string_view data) {
    if (KnownSteps()) return;
    uint64_t line = next_line_;
    for (std::string_view text : TextLines(data)) {
      if (line > kLearnLines) break;
      learner_.Offer(text, static_cast<double>(line++));
    }
    if (learner_.kind() == LearnedKind::kCounter && learner_.Adopt())
      facts_.learned_template = Sanitize(learner_.shape());
  }

  // The learned template's lines: a memmem for its longest literal, then
  // the whole comparison on that line only.
  void LearnedSteps(std::string_view data) {
    if (learner_.anchor().empty()) return;
    uint64_t line = next_line_;
    size_t counted = 0;
    for (size_t hit = data.find(learner_.anchor()); hit != data.npos;) {
      const void* nl_before = hit == 0 ? nullptr : memrchr(data.data(), '\n', hit);
      size_t start = nl_before ? static_cast<const char*>(nl_before) - data.data() + 1 : 0;
      line += CountNewlines(data.data() + counted, data.data() + start);
      counted = start;
      size_t end = data.find('\n', hit);
      if (end == data.npos) end = data.size();
      std::string_view text = StripCr(data.substr(start, end - start));
      if (auto sample = learner_.Match(text)) AddStep(StepProfile::kLearned, *sample, line, text);
      if (end == data.size()) break;
      hit = data.find(learner_.anchor(), end + 1);
    }
  }

  // A configured regex has capture groups, which Hyperscan lacks: RE2 runs
  // on every line, only when one is configured. This pass runs after the
  // chunk's lines, so it keeps its own clock in line order: a step's time is
  // its line's own timestamp, else the last timestamp before it plus the
  // step seconds since that timestamp (never the chunk's last timestamp).
  void CustomSteps(std::string_view data) {
    uint64_t line = next_line_;
    const RE2& re = *impl_.custom_step;
    const bool has_seconds = re.NumberOfCapturingGroups() >= 2;
    // (?P<ms>...) / (?P<milliseconds>...): a bare number is milliseconds.
    const double bare_scale = re.NamedCapturingGroups().count("seconds") ? 1.0 : 0.001;
    for (std::string_view raw : TextLines(data)) {
      std::string_view text = StripCr(raw);
      std::optional<double> own_time = FindIsoTimestamp(text);
      if (!own_time) own_time = YearlessTime(text);
      if (own_time) {
        custom_anchor_ = own_time;
        custom_since_anchor_ = 0;
      }
      int64_t step = 0;
      re2::StringPiece seconds_text;
      bool matched = has_seconds
                         ? RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re, &step,
                                             &seconds_text)
                         : RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re, &step);
      if (matched) {
        std::optional<double> seconds;
        if (has_seconds && seconds_text.data() != nullptr) {
          size_t after =
              static_cast<size_t>(seconds_text.data() - text.data()) + seconds_text.size();
          seconds = ParseDuration({seconds_text.data(), seconds_text.size()},
                                  text.substr(std::min(after, text.size())), bare_scale);
        }
        std::optional<double> at = own_time;
        if (!at && custom_anchor_)
          at = *custom_anchor_ + custom_since_anchor_ + seconds.value_or(0);
        uint64_t before = facts_.steps[static_cast<size_t>(StepProfile::kCustom)].count();
        AddStep(StepProfile::kCustom, MakeStepSample(step, seconds, std::nullopt, own_time), line,
                text);
        if (facts_.steps[static_cast<size_t>(StepProfile::kCustom)].count() != before) {
          if (!own_time) custom_since_anchor_ += seconds.value_or(0);
          if (at) facts_.last_step_time[static_cast<size_t>(StepProfile::kCustom)] = at;
        }
      }
      ++line;
    }
  }

  // A class's weight on this line: a consequence pattern is the most
  // specific statement ("connection reset by peer" inside an NCCL WARN),
  // then root, then generic.
  Weight LineWeight(int class_index) const {
    bool root = false, generic = false;
    for (unsigned id : ids_) {
      const PatternDef& def = impl_.patterns[id];
      if (def.kind != Kind::kClass || def.arg != class_index) continue;
      if (def.weight == Weight::kConsequence) return Weight::kConsequence;
      if (def.weight == Weight::kTraceback) return Weight::kTraceback;
      root |= def.weight == Weight::kRoot;
      generic |= def.weight == Weight::kGeneric;
    }
    return root ? Weight::kRoot : generic ? Weight::kGeneric : Weight::kConsequence;
  }

  void AddClassHit(const std::string& id, uint64_t line, std::string_view text,
                   Weight weight = Weight::kGeneric) {
    ClassHits& hits = facts_.classes[id];
    latest_hit_line_ = std::max(latest_hit_line_, line);
    LineRef ref{line, Sanitize(text)};
    if (weight == Weight::kTraceback) {
      // Weighed when its exception line arrives (ExceptionLine), in order.
      if (open_tracebacks_.size() >= kMaxOpenTracebacks) CloseTraceback(Weight::kGeneric);
      open_tracebacks_.push_back(line);
    } else {
      auto& first = weight == Weight::kRoot      ? hits.first_root
                    : weight == Weight::kGeneric ? hits.first_generic
                                                 : hits.first_consequence;
      if (!first) {
        first = line;
        TakeStepCounts(weight == Weight::kRoot      ? hits.steps_at_root
                       : weight == Weight::kGeneric ? hits.steps_at_generic
                                                    : hits.steps_at_consequence,
                       line);
      }
      (weight == Weight::kRoot      ? hits.last_root
       : weight == Weight::kGeneric ? hits.last_generic
                                    : hits.last_consequence) = line;
      TakeStepCounts(weight == Weight::kRoot      ? hits.steps_at_last_root
                     : weight == Weight::kGeneric ? hits.steps_at_last_generic
                                                  : hits.steps_at_last_consequence,
                     line);
    }
    if (hits.count == 0) hits.first = ref;
    if (hits.examples.size() < kEvidencePerClass) hits.examples.push_back(ref);
    hits.last = std::move(ref);
    ++hits.count;
  }

  // The generic prefilter's match counts where it is confirmed
  // (PatternDef::confirm): on a line no specific format explains (ReadChunk
  // confirmed it there, and read the generic counter: the monitor's
  // DetectStep takes the first profile that parses, and so does this), and
  // elsewhere until the pattern is first seen matched.
  void CountGeneric(const ChunkReading::Line& read, std::string_view text) {
    std::optional<unsigned> generic;
    for (unsigned id : ids_) {
      const PatternDef& def = impl_.patterns[id];
      if (def.kind == Kind::kStep && static_cast<StepProfile>(def.arg) == StepProfile::kGeneric)
        generic = id;
    }
    if (!generic) return;
    const bool explained = read.samples_end > read.samples_begin && !read.generic_sample;
    if (!explained) {
      if (read.generic_confirmed) facts_.matched_patterns[*generic] = true;
    } else if (!facts_.matched_patterns[*generic]) {
      const PatternDef& def = impl_.patterns[*generic];
      if (!def.confirm || def.confirm(text)) facts_.matched_patterns[*generic] = true;
    }
  }

  // Whether Ray folded a step line, and its rank; read once a line. A copy
  // of the step line `copy_of_back` lines before it from another task
  // (ChunkReading::Line::copy_of_back) has that line's, with its own task.
  struct StepLineRank {
    uint64_t line = 0;
    bool valid = false;
    bool folded = false;
    std::optional<RankId> rank;
  };
  const StepLineRank& RankOf(uint64_t line, std::string_view text, uint32_t copy_of_back,
                             int task) {
    StepLineRank& known = step_line_rank_;
    if (known.valid && known.line == line) return known;
    if (known.valid && copy_of_back > 0 && task >= 0 && known.line == line - copy_of_back &&
        known.rank && known.rank->task >= 0) {
      known.line = line;
      known.rank->task = task;
      return known;
    }
    known.line = line;
    known.valid = true;
    // A line Ray folded is the job's progress, no actor's own (IsRayFolded).
    known.folded = IsRayFolded(text);
    known.rank = known.folded ? std::nullopt : LineRank(text);
    return known;
  }

  void AddStep(StepProfile profile, StepSample sample, uint64_t line, std::string_view text,
               uint32_t copy_of_back = 0, int task = -1) {
    size_t p = static_cast<size_t>(profile);
    if (!sample.timestamp && line_time_ && line_time_->first == line) {
      sample.timestamp = line_time_->second;  // the line's own absl/ISO stamp
    }
    // Every rank's own position as printed, before the filter keeps one
    // rank's view of the run (rank_progress.h).
    const StepLineRank& read = RankOf(line, text, copy_of_back, task);
    const bool folded = read.folded;
    const std::optional<RankId>& rank = read.rank;
    if (folded) facts_.rank_progress.Fold();
    if (rank) facts_.rank_progress.Offer(*rank, sample.step, sample.epoch, sample.timestamp, line);
    if (rank && (!furthest_any_rank_[p] || sample.step > *furthest_any_rank_[p]))
      furthest_any_rank_[p] = sample.step;
    if (!folded && !lead_.Admit(rank)) {
      // One rank's view of progress is enough (rank_progress.h, LeadRank);
      // the others' tasks are still counted (a line's rank carries its task
      // label, parsed once).
      RecordTask(rank ? rank->task : TaskLabel(text).value_or(-1), sample.step);
      return;
    }
    const uint64_t before = facts_.steps[p].count();
    // Which samples count (the generic profile's guard, the training bar
    // by its total): the rules the monitor applies too (step_filter.h).
    for (const StepFilter::Accepted& accepted : filter_.Offer(profile, sample, line, text)) {
      // Activity (a validation bar, a replay below the highest step) keeps
      // a live job live; offline, the steps are what counts.
      if (accepted.activity) continue;
      RecordStep(profile, p, accepted.sample, accepted.line, accepted.text);
    }
    if (rank) CountCatchUp(p, sample.step, line, facts_.steps[p].count() - before);
  }

  // A lead rank that lagged behind another when a failure line was read
  // logs, after it, steps the other rank had already logged before it: they
  // are the lead catching up, not training going on after the failure, and
  // count as before it (else the failure would look survived). The lead's
  // first step past that point, or a step back (a restart), ends this.
  void CountCatchUp(size_t p, int64_t step, uint64_t line, uint64_t added) {
    std::erase_if(catch_ups_, [&](const CatchUp& c) {
      if (c.profile != p || line <= c.line) return false;
      if (step > c.furthest || step < c.lead_step) return true;
      (*c.counts)[p] += added;
      return false;
    });
  }

  // The step counts at a failure line, and what the lead rank still has to
  // catch up on there (CountCatchUp).
  void TakeStepCounts(ClassHits::StepCounts& counts, uint64_t line) {
    StepCountsNow(counts);
    std::erase_if(catch_ups_, [&](const CatchUp& c) { return c.counts == &counts; });
    for (size_t p = 0; p < kStepProfileCount; ++p) {
      std::optional<StepPoint> lead = facts_.steps[p].last();
      if (lead && furthest_any_rank_[p] && *furthest_any_rank_[p] > lead->step)
        catch_ups_.push_back({&counts, p, line, *furthest_any_rank_[p], lead->step});
    }
  }

  // `task` -1: none. Not an optional: packing one into a register at every
  // step line stalled on its two stores (perf annotate).
  void RecordTask(int task, int64_t step) {
    if (task < 0) return;
    // The first tasks' entries, kept at hand: every step line records one
    // (a map's entries stay where they are while the scan inserts).
    const bool at_hand = static_cast<size_t>(task) < task_steps_.size();
    if (at_hand && task_steps_[task]) {
      *task_steps_[task] = step;
      return;
    }
    auto& by_task = facts_.last_step_by_task;
    auto known = by_task.find(task);
    if (known != by_task.end()) {
      known->second = step;
    } else if (by_task.size() < kMaxTasks) {
      known = by_task.emplace(task, step).first;
    } else {
      return;
    }
    if (at_hand) task_steps_[task] = &known->second;
  }

  // Each profile's last step now (a checkpoint save holds them).
  std::array<std::optional<int64_t>, kStepProfileCount> StepsNow() const {
    std::array<std::optional<int64_t>, kStepProfileCount> steps;
    for (size_t p = 0; p < kStepProfileCount; ++p) {
      if (auto last = facts_.steps[p].last()) steps[p] = last->step;
    }
    return steps;
  }

  void CommitSave(uint64_t line) {
    for (size_t p = 0; p < kStepProfileCount; ++p) {
      if ((*pending_save_)[p]) facts_.step_at_last_save[p] = (*pending_save_)[p];
    }
    facts_.last_save_line = line;
    pending_save_.reset();
  }

  void RecordStep(StepProfile profile, size_t p, StepSample sample, uint64_t line,
                  std::string_view text) {
    // An announced save that training stepped on after was written.
    if (pending_save_ && line > pending_save_line_) CommitSave(pending_save_line_);
    RecordTask(TaskLabel(text).value_or(-1), sample.step);
    facts_.printed_offset[p] = filter_.printed_offset(profile);
    // A step time from the line itself; else from the line timestamps.
    if (!sample.seconds && sample.timestamp && prev_step_[p] && prev_ts_[p] &&
        sample.step > *prev_step_[p]) {
      sample.seconds =
          (*sample.timestamp - *prev_ts_[p]) / static_cast<double>(sample.step - *prev_step_[p]);
    }
    if (sample.timestamp) {
      prev_ts_[p] = sample.timestamp;
      prev_step_[p] = sample.step;
    }
    if (sample.total_steps && !facts_.total_steps) facts_.total_steps = sample.total_steps;
    bool checkpoint =
        facts_.checkpointing && IsCheckpointStep(sample.step, facts_.checkpoint_period);
    if ((profile == StepProfile::kHuggingFace || profile == StepProfile::kLightning) &&
        facts_.steps[p].last() && facts_.steps[p].last()->step == sample.step) {
      return;  // a bar redrawn at the same count (after tqdm.write): no new step, no restart
    }
    if (!facts_.steps[p].last() && sample.step > 0 && BarOpenedAt(profile, text) == 0) {
      // The bar opened at 0/N on this line: the run began at step 0, though
      // the line's last update is further on (no restore from a checkpoint).
      facts_.steps[p].Add(0, std::nullopt, line, false);
    }
    uint64_t before = facts_.steps[p].count();
    facts_.steps[p].Add(sample.step, sample.seconds, line, checkpoint);
    if (facts_.steps[p].count() == before) return;  // a repeat
    if (line < latest_hit_line_) CountBeforeLaterHits(p, line);
    if (profile == StepProfile::kCustom) return;  // CustomSteps keeps its own clock
    if (sample.timestamp) {
      facts_.last_step_time[p] = sample.timestamp;
      since_anchor_[p] = 0;
    } else if (anchor_) {
      since_anchor_[p] += sample.seconds.value_or(0);
      facts_.last_step_time[p] = *anchor_ + since_anchor_[p];
    }
  }

  void Timestamp(double t, uint64_t line) {
    line_time_ = {line, t};
    for (size_t p = 0; p < kStepProfileCount; ++p) {
      std::optional<StepPoint> last = facts_.steps[p].last();
      if (!last || last->line >= line) continue;
      auto& after = facts_.time_after_last_step[p];
      if (!after || after->step_line != last->line)
        after = ScanFacts::TimeAfterStep{last->line, t, line, 0};
      ++after->stamped_lines;
    }
    if (!facts_.first_timestamp) facts_.first_timestamp = t;
    if (!facts_.last_timestamp || t >= *facts_.last_timestamp) facts_.last_timestamp = t;
    anchor_ = t;
    since_anchor_.fill(0);
  }

  std::optional<double> YearlessTime(std::string_view text) {
    int year = facts_.timestamp_year.value_or(0);
    if (year == 0) {
      time_t now = time(nullptr);
      tm utc{};
      gmtime_r(&now, &utc);
      year = utc.tm_year + 1900;
    }
    return ParseYearlessTimestamp(text, year);
  }

  // A line some pattern matched (its ids_, sorted and unique), with what
  // ReadChunk read of it.
  void Line(uint64_t line, std::string_view text, const ChunkReading::Line& read,
            const ChunkReading& reading) {
    // Which kinds the line holds, from the packed kinds (most lines are
    // step lines of one or two ids, and need none of the passes below).
    std::array<bool, kKindCount> holds{};  // by Kind
    for (unsigned id : ids_) holds[static_cast<size_t>(impl_.kinds[id])] = true;
    const bool failure = holds[static_cast<size_t>(Kind::kClass)];
    const bool harmless = holds[static_cast<size_t>(Kind::kHarmless)];
    const bool step = holds[static_cast<size_t>(Kind::kStep)];
    const bool fact = holds[static_cast<size_t>(Kind::kFact)];
    for (unsigned id : ids_) {
      // A confirmed pattern's looser parts matched: it counts once confirmed, below.
      if (!facts_.matched_patterns[id] && !impl_.patterns[id].confirm)
        facts_.matched_patterns[id] = true;
    }
    if (harmless) ++facts_.harmless_lines;
    // srun's end of a task that already logged its own error is that
    // error's last link, not a second failure (checked before the facts
    // below record this line as the task's error).
    bool folded_exit = false;
    bool exception_line = false;
    if (fact) {
      for (unsigned id : ids_) {
        const PatternDef& def = impl_.patterns[id];
        if (def.kind != Kind::kFact) continue;
        if (static_cast<Fact>(def.arg) == Fact::kTaskExit) {
          auto task = ParseTaskExit(text);
          auto it = task ? facts_.task_errors.find(*task) : facts_.task_errors.end();
          folded_exit = it != facts_.task_errors.end() && !it->second.empty();
        }
        exception_line |= static_cast<Fact>(def.arg) == Fact::kExceptionLine;
      }
      // Facts first (timestamps anchor the steps on the same line), then classes.
      for (unsigned id : ids_) {
        const PatternDef& def = impl_.patterns[id];
        if (def.kind == Kind::kFact) FactLine(static_cast<Fact>(def.arg), line, text);
      }
    }
    // Each specific format's sample, then the generic counter's.
    for (uint32_t i = read.samples_begin; i < read.samples_end; ++i) {
      const ChunkReading::Sample& parsed = reading.samples[i];
      AddStep(parsed.profile, parsed.sample, line, text, read.copy_of_back, read.task);
    }
    if (step) CountGeneric(read, text);
    if (harmless || (!failure && !exception_line)) return;
    std::vector<int>& classes = classes_;
    classes.clear();
    for (unsigned id : ids_) {
      if (impl_.kinds[id] == Kind::kClass) classes.push_back(impl_.patterns[id].arg);
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    if (folded_exit) {
      std::erase_if(classes, [](int index) {
        const std::string& id = FailureClasses()[static_cast<size_t>(index)].id;
        return id == "signal-kill" || id == "subprocess-fail";
      });
    }
    if (exception_line) {
      // The oldest open traceback ends here: a Python exception of its own,
      // or the text of another class (then a consequence or that class).
      bool other = std::any_of(classes.begin(), classes.end(), [](int index) {
        return FailureClasses()[static_cast<size_t>(index)].id != "python-exception";
      });
      // Raised inside a model or checkpoint loader (the traceback's frames,
      // line_facts.cc): a load failure, whatever the exception says, unless
      // it is an interruption or memory running out.
      const bool raised_by_loader = !other && !open_tracebacks_.empty() && loader_frame_line_ &&
                                    *loader_frame_line_ > open_tracebacks_.front() &&
                                    !IsInterruptionOrMemory(text);
      other |= raised_by_loader;
      if (!open_tracebacks_.empty())
        CloseTraceback(other ? Weight::kConsequence : Weight::kGeneric);
      if (raised_by_loader) AddClassHit("model-not-found", line, text, Weight::kRoot);
      if (!other && !facts_.first_exception) facts_.first_exception = LineRef{line, Sanitize(text)};
    }
    for (int index : classes) {
      const FailureClass& c = FailureClasses()[static_cast<size_t>(index)];
      bool suppressed = false;
      for (int other : classes) {
        const std::string& other_id = FailureClasses()[static_cast<size_t>(other)].id;
        suppressed |= std::find(c.not_with.begin(), c.not_with.end(), other_id) != c.not_with.end();
      }
      if (suppressed) continue;
      const std::string& id = c.id;
      AddClassHit(id, line, text, LineWeight(index));
      if (id == "heartbeat-timeout" && !facts_.heartbeat)
        facts_.heartbeat = LineRef{line, Sanitize(text)};
      if (!facts_.heartbeat && IsRealTaskError(id)) RecordTaskError(text, line);
    }
  }

  void CloseTraceback(Weight weight) {
    uint64_t start = open_tracebacks_.front();
    open_tracebacks_.pop_front();
    ClassHits& hits = facts_.classes["python-exception"];
    latest_hit_line_ = std::max(latest_hit_line_, start);
    auto& first = weight == Weight::kGeneric ? hits.first_generic : hits.first_consequence;
    if (!first || start < *first) {
      first = start;
      TakeStepCounts(weight == Weight::kGeneric ? hits.steps_at_generic : hits.steps_at_consequence,
                     start);
    }
    auto& last = weight == Weight::kGeneric ? hits.last_generic : hits.last_consequence;
    if (!last || start > *last) {
      last = start;
      TakeStepCounts(
          weight == Weight::kGeneric ? hits.steps_at_last_generic : hits.steps_at_last_consequence,
          start);
    }
  }

  // The learned and custom step passes run after a chunk's lines: a step
  // line they find before a failure line already weighed belongs to the
  // step counts taken at that failure (else the failure looks survived).
  void CountBeforeLaterHits(size_t p, uint64_t line) {
    auto count_if_later = [&](const std::optional<uint64_t>& at, ClassHits::StepCounts& counts) {
      if (at && *at > line) ++counts[p];
    };
    for (auto& entry : facts_.classes) {
      ClassHits& hits = entry.second;
      count_if_later(hits.first_root, hits.steps_at_root);
      count_if_later(hits.first_generic, hits.steps_at_generic);
      count_if_later(hits.first_consequence, hits.steps_at_consequence);
      count_if_later(hits.last_root, hits.steps_at_last_root);
      count_if_later(hits.last_generic, hits.steps_at_last_generic);
      count_if_later(hits.last_consequence, hits.steps_at_last_consequence);
    }
  }

  void StepCountsNow(ClassHits::StepCounts& counts) const {
    for (size_t p = 0; p < counts.size(); ++p) counts[p] = facts_.steps[p].count();
  }

  void RecordTaskError(std::string_view text, uint64_t line) {
    auto task = TaskOf(text);
    if (!task) return;
    auto& list = facts_.task_errors[*task];
    if (list.size() < kEvidencePerClass && facts_.task_errors.size() <= kMaxTasks) {
      list.push_back({line, Sanitize(text)});
    }
  }

  // The wording of each fact, and its parser, are in line_facts.cc; here
  // what the scan keeps of it (first or last, bounded, sanitised).
  void FactLine(Fact fact, uint64_t line, std::string_view text) {
    switch (fact) {
      case Fact::kSummary:
        facts_.summary = LineRef{line, Sanitize(text)};
        break;
      case Fact::kStatusSuccess:
        facts_.exit_code = 0;
        facts_.status_line = LineRef{line, Sanitize(text)};
        break;
      case Fact::kStatusFailed:
        if (auto code = ParseFailedStatus(text)) {
          facts_.exit_code = *code;
          facts_.status_line = LineRef{line, Sanitize(text)};
        }
        break;
      case Fact::kNodeExit: {
        auto exit = ParseNodeExit(text);
        if (!exit) break;
        if (facts_.node_exits.size() < kMaxTasks) {
          facts_.node_exits.push_back({Sanitize(exit->host), exit->code, {line, Sanitize(text)}});
        }
        // exit=143 on a node is the clean SIGTERM of a cancellation.
        if (exit->code != 0 && exit->code != 143) AddClassHit("node-fail", line, text);
        break;
      }
      case Fact::kPassthrough:
        if (!seen_passthrough_) {
          if (auto args = ParsePassthroughArgs(text)) {
            if (args->total_steps) facts_.total_steps = args->total_steps;
            if (args->checkpointing) facts_.checkpointing = *args->checkpointing;
          }
        }
        seen_passthrough_ = true;
        break;
      case Fact::kCheckpointPeriod:
        if (auto period = ParseCheckpointPeriod(text)) facts_.checkpoint_period = *period;
        break;
      case Fact::kNnodes:
        if (!facts_.nnodes) facts_.nnodes = ParseNnodes(text);
        break;
      case Fact::kNodeList:
        if (!facts_.node_list) {
          if (auto list = ParseNodeList(text)) facts_.node_list = Sanitize(*list);
        }
        break;
      case Fact::kJobId:
        if (!facts_.job_id) {
          if (auto id = ParseHeaderJobId(text)) facts_.job_id = Sanitize(*id);
        }
        break;
      case Fact::kAccusedTask:
        if (facts_.heartbeat && line <= facts_.heartbeat->line + kAccusedWindowLines) {
          for (int task : ParseAccusedTasks(text)) {
            if (facts_.accused_tasks.size() < kMaxTasks) facts_.accused_tasks.insert(task);
          }
        }
        break;
      case Fact::kTaskHostFake:
      case Fact::kTaskHostJax: {
        auto host =
            fact == Fact::kTaskHostFake ? ParseFakeTrainerTaskHost(text) : ParseJaxTaskHost(text);
        if (host && facts_.task_hosts.size() < kMaxTasks) {
          facts_.task_hosts[host->task] = Sanitize(host->host);
        }
        break;
      }
      case Fact::kSelfDeath:
        if (auto task = TaskOf(text);
            task && !facts_.self_death.count(*task) && facts_.self_death.size() < kMaxTasks) {
          facts_.self_death[*task] = LineRef{line, Sanitize(text)};
        }
        break;
      case Fact::kIsoTimestamp:
        if (auto t = FindIsoTimestamp(text)) {
          // The UTC year of the stamp (std::chrono's civil calendar; gmtime_r
          // goes through libc's time-zone code on every stamped line).
          const auto day = std::chrono::floor<std::chrono::days>(
              std::chrono::sys_seconds{std::chrono::seconds{static_cast<int64_t>(*t)}});
          facts_.timestamp_year = static_cast<int>(std::chrono::year_month_day{day}.year());
          Timestamp(*t, line);
        }
        break;
      case Fact::kYearlessTimestamp:
        if (auto t = YearlessTime(text)) Timestamp(*t, line);
        break;
      case Fact::kEpochStamp:
        if (auto t = ParseEpochStamp(text)) Timestamp(*t, line);
        break;
      case Fact::kClockStamp:
        // Dated by the last full time seen: the first clock within an
        // hour of it, each next within half a day of the one before.
        if (auto clock = ParseClockStamp(text); clock && facts_.last_timestamp) {
          if (auto t = DateClock(*clock, *facts_.last_timestamp, clock_dated_ ? 43200 : 3600)) {
            clock_dated_ = true;
            Timestamp(*t, line);
          }
        }
        break;
      case Fact::kRuntimeMark:
        facts_.runtimes |= RuntimesNamedBy(text);
        break;
      case Fact::kCheckpointWord:
        switch (CheckpointSaveOf(WithoutTaskLabel(text))) {
          case CheckpointSave::kDone:
            // "saved": what was announced, or the steps so far.
            if (!pending_save_) pending_save_ = StepsNow();
            CommitSave(line);
            break;
          case CheckpointSave::kAnnounced:
            pending_save_ = StepsNow();
            pending_save_line_ = line;
            break;
          case CheckpointSave::kNone:
            break;
        }
        break;
      case Fact::kSpawnFailedProcess:
        if (!facts_.spawn_failed_process)
          facts_.spawn_failed_process = ParseSpawnFailedProcess(text);
        break;
      case Fact::kFatalPythonError:
        fatal_python_error_line_ = line;
        break;
      case Fact::kStackDump:
        // A crash's dump follows its "Fatal Python error" within a few lines.
        if (!facts_.stack_dump &&
            (!fatal_python_error_line_ || line > *fatal_python_error_line_ + 4))
          facts_.stack_dump = LineRef{line, Sanitize(text)};
        break;
      case Fact::kTunnel:
        if (!facts_.tunnel) facts_.tunnel = LineRef{line, Sanitize(text)};
        break;
      case Fact::kPrometheusPort:
        if (auto port = ParsePrometheusPort(text)) facts_.prometheus_port = *port;
        break;
      case Fact::kRestore:
        if (auto step = ParseRestoreStep(text)) facts_.restore_step = *step;
        break;
      case Fact::kFreshStart:
        facts_.fresh_start_logged = true;
        break;
      case Fact::kLauncherRootCause:
        if (facts_.launcher_root_causes.size() < kMaxLauncherRootCauses)
          facts_.launcher_root_causes.push_back({LineRef{line, Sanitize(text)}, {}});
        break;
      case Fact::kLauncherField:
        // The block's fields follow its header within a few lines.
        if (!facts_.launcher_root_causes.empty()) {
          auto& block = facts_.launcher_root_causes.back();
          if (line > block.header.line && line - block.header.line <= 8 && block.fields.size() < 3)
            block.fields.push_back({line, Sanitize(text)});
        }
        break;
      case Fact::kHeartbeatTimeout:
        if (auto timeout = ParseHeartbeatTimeout(text)) facts_.heartbeat_timeout = *timeout;
        break;
      case Fact::kCompletion:
        facts_.completion = LineRef{line, Sanitize(text)};
        break;
      case Fact::kPlannedTotal:
        if (!seen_passthrough_ && !facts_.total_steps) facts_.total_steps = ParsePlannedTotal(text);
        break;
      case Fact::kTimeLimitSignal:
        facts_.time_limit_signal = LineRef{line, Sanitize(text)};
        break;
      case Fact::kLoaderFrame:
        loader_frame_line_ = line;
        break;
      case Fact::kAbruptExit:
        facts_.abrupt_exit = LineRef{line, Sanitize(text)};
        break;
      case Fact::kExceptionLine:  // handled in Line()
      case Fact::kTaskExit:
        break;
      case Fact::kSlurmEnd:
        if (!facts_.slurm_end) facts_.slurm_end = LineRef{line, Sanitize(text)};
        break;
      case Fact::kTaskKilled:
        if (!facts_.heartbeat) {
          if (auto task = ParseKilledTask(text)) {
            auto& list = facts_.task_errors[*task];
            if (list.size() < kEvidencePerClass) list.push_back({line, Sanitize(text)});
          }
        }
        break;
    }
  }

  const LogScanner::Impl& impl_;
  ScanFacts& facts_;
  std::span<const unsigned> ids_;  // the current line's patterns
  std::vector<int> classes_;
  std::deque<uint64_t> open_tracebacks_;       // first lines of tracebacks awaiting their exception
  std::optional<uint64_t> loader_frame_line_;  // the last traceback frame inside a loader

  static bool IsInterruptionOrMemory(std::string_view text) {
    for (std::string_view name : {"KeyboardInterrupt", "SystemExit", "SignalException",
                                  "MemoryError", "OutOfMemoryError"}) {
      if (text.find(name) != text.npos) return true;
    }
    return false;
  }
  uint64_t next_line_ = 1;
  std::deque<LineRef> raw_tail_;  // the tail as printed (CaptureTail)
  uint64_t latest_hit_line_ = 0;  // the latest line a class hit was counted at
  bool seen_passthrough_ = false;
  std::optional<double> anchor_;
  std::array<double, kStepProfileCount> since_anchor_{};
  std::array<std::optional<double>, kStepProfileCount> prev_ts_{};
  std::array<std::optional<int64_t>, kStepProfileCount> prev_step_{};
  std::optional<std::pair<uint64_t, double>> line_time_;  // the last stamped line, its time
  bool clock_dated_ = false;                         // a time-of-day stamp was dated (kClockStamp)
  std::optional<uint64_t> fatal_python_error_line_;  // the last "Fatal Python error: "
  // A save announced, not yet known to be done: the steps it holds.
  std::optional<std::array<std::optional<int64_t>, kStepProfileCount>> pending_save_;
  uint64_t pending_save_line_ = 0;
  StepFilter filter_;
  LeadRank lead_;  // whose step lines are the progress
  // The furthest step any rank logged, by profile; what a failure's counts
  // wait for the lead to catch up on (CountCatchUp).
  std::array<std::optional<int64_t>, kStepProfileCount> furthest_any_rank_{};
  std::array<int64_t*, 64> task_steps_{};  // RecordTask's: the first tasks' last steps
  StepLineRank step_line_rank_;            // RankOf's: the last step line's
  struct CatchUp {
    ClassHits::StepCounts* counts;  // a node of facts_.classes: stable
    size_t profile;
    uint64_t line;      // the failure line
    int64_t furthest;   // the furthest step any rank had logged then
    int64_t lead_step;  // the lead's last step then
  };
  std::vector<CatchUp> catch_ups_;
  TemplateLearner learner_;
  std::optional<double> custom_anchor_;
  double custom_since_anchor_ = 0;
};

}  // namespace

std::unique_ptr<ChunkSink> NewScanState(const LogScanner::Impl& impl, ScanFacts& facts) {
  return std::make_unique<ScanState>(impl, facts);
}

}  // namespace jobmon::triage
