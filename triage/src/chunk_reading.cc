#include "chunk_reading.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <utility>

#include "jobmon/common/ascii.h"

namespace jobmon::triage {
namespace {

int OnMatch(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
            void* context) {
  static_cast<std::vector<MatchEvent>*>(context)->push_back({to, id});
  return 0;
}

// Hyperscan reports a chunk's matches in order of their ends, almost always.
void SortByEnd(std::vector<MatchEvent>& events) {
  auto by_end = [](const MatchEvent& a, const MatchEvent& b) { return a.to < b.to; };
  if (!std::is_sorted(events.begin(), events.end(), by_end))
    std::stable_sort(events.begin(), events.end(), by_end);
}

// `ids` from `first` on, sorted, each once. A line holds a few: an
// insertion sort, without std::sort's set-up for each line, that moves one
// id at a time (swapping pairs, it read two ids just pushed one at a time
// in one load, which stalled on store forwarding: perf annotate).
void SortUnique(std::pmr::vector<unsigned>& ids, std::pmr::vector<unsigned>::iterator first) {
  for (auto it = first + 1; it < ids.end(); ++it) {
    const unsigned id = *it;
    auto at = it;
    for (; at > first && *(at - 1) > id; --at) *at = *(at - 1);
    *at = id;
  }
  ids.erase(std::unique(first, ids.end()), ids.end());
}

// What ReadStepLine read of a step line, for its entry and for the copies
// of it that follow (kept from these values, not read back from the entry
// just written: a wide load of its narrow stores stalled, perf annotate).
struct StepLineRead {
  uint32_t samples_begin = 0, samples_end = 0;
  bool generic_confirmed = false;
  bool generic_sample = false;
};

// A step prefilter's line: each specific format's sample, or else the
// generic counter's where its prefilter is confirmed.
StepLineRead ReadStepLine(const LogScanner::Impl& impl, std::string_view text,
                          std::span<const unsigned> ids,
                          std::pmr::vector<ChunkReading::Sample>& samples) {
  StepLineRead read;
  read.samples_begin = static_cast<uint32_t>(samples.size());
  // Parsed where it lies (ParseStepInto), dropped where the line is no step.
  auto parse = [&](StepProfile profile) {
    ChunkReading::Sample& sample = samples.emplace_back();
    sample.profile = profile;
    if (ParseStepInto(profile, text, sample.sample)) return true;
    samples.pop_back();
    return false;
  };
  std::optional<unsigned> generic;
  for (unsigned id : ids) {
    const PatternDef& def = impl.patterns[id];
    if (def.kind != Kind::kStep) continue;
    const auto profile = static_cast<StepProfile>(def.arg);
    if (profile == StepProfile::kGeneric) {
      generic = id;
    } else {
      parse(profile);
    }
  }
  if (generic && samples.size() == read.samples_begin) {
    const PatternDef& def = impl.patterns[*generic];
    read.generic_confirmed = !def.confirm || def.confirm(text);
    if (read.generic_confirmed) read.generic_sample = parse(StepProfile::kGeneric);
  }
  read.samples_end = static_cast<uint32_t>(samples.size());
  return read;
}

constexpr size_t kMarkedLineBytes = 16, kLinesMarkedAnyway = 1024;

}  // namespace

size_t MarkedLinesAtMost(size_t bytes) { return bytes / kMarkedLineBytes + kLinesMarkedAnyway + 1; }

namespace {

// The chunk's lines into `scratch.lines` (nullopt, and none, once they
// average under 16 bytes, past the first thousand: there no repeat saves
// much, and marking them would cost more): where each ends, its srun label,
// and whether it repeats the line before it (a label as long, or none, and
// the same text after it).
struct Repeats {
  size_t lines = 0, bytes = 0;
  size_t runs = 0;  // of repeats, each after a line that does not repeat
};
std::optional<Repeats> MarkLines(std::string_view data, MatchScratch& scratch) {
  scratch.lines.clear();
  Repeats repeated;
  size_t label_before = 0;
  std::string_view after_label_before;
  for (size_t start = 0; start < data.size();) {
    const void* nl = std::memchr(data.data() + start, '\n', data.size() - start);
    const size_t end = nl ? static_cast<const char*>(nl) - data.data() : data.size();
    const std::string_view line = data.substr(start, end - start);
    // A label starts with a digit or a space (TaskLabelLength): most lines
    // are told apart by their first byte, without the call.
    const auto [task, after_label] =
        !line.empty() && (IsAsciiDigit(line[0]) || line[0] == ' ')
            ? SplitTaskLabel(line)
            : std::pair<std::optional<int>, std::string_view>{std::nullopt, line};
    const size_t label = line.size() - after_label.size();
    const bool repeats = start > 0 && label == label_before && after_label == after_label_before;
    if (repeats) {
      repeated.runs += scratch.lines.back().repeats ? 0 : 1;
      ++repeated.lines;
      repeated.bytes += end + 1 - start;
    }
    if (scratch.lines.size() > start / kMarkedLineBytes + kLinesMarkedAnyway) {
      scratch.lines.clear();
      return std::nullopt;
    }
    scratch.lines.push_back(
        {static_cast<uint32_t>(end), task.value_or(-1), static_cast<uint8_t>(label), repeats});
    label_before = label;
    after_label_before = after_label;
    if (!nl) break;
    start = end + 1;
  }
  return repeated;
}

// The database's matches in `data` into scratch.events, in order of their
// ends, as offsets in `data`: of the lines not marked as repeats
// (MarkLines), copied end to end into scratch.unrepeated and scanned there.
// A line's matches depend on nothing outside it, and not on its label's
// number (scan_patterns_test.cc): a repeat's are the line's before it.
void MatchUnrepeated(const LogScanner::Impl& impl, std::string_view data, MatchScratch& scratch) {
  std::vector<MatchScratch::Run>& runs = scratch.runs;
  runs.clear();
  uint32_t filled = 0;
  uint32_t start = 0;
  for (const MatchScratch::LineMark& mark : scratch.lines) {
    const uint32_t next = std::min(mark.end + 1, static_cast<uint32_t>(data.size()));
    if (!mark.repeats) {
      if (!runs.empty() && runs.back().chunk_begin + runs.back().size == start) {
        runs.back().size += next - start;
      } else {
        runs.push_back({start, filled, next - start});
      }
      filled += next - start;
    }
    start = next;
  }
  for (const MatchScratch::Run& run : runs) {
    std::memcpy(scratch.unrepeated.data() + run.unrepeated_begin, data.data() + run.chunk_begin,
                run.size);
  }
  hs_scan(impl.database, scratch.unrepeated.data(), filled, 0, scratch.hs, OnMatch,
          &scratch.events);
  SortByEnd(scratch.events);
  // Ends move into the chunk's offsets; a match ends after its run's
  // first byte and at most at its last (its newline).
  size_t at = 0;
  for (MatchEvent& event : scratch.events) {
    while (event.to > runs[at].unrepeated_begin + runs[at].size) ++at;
    event.to = event.to - runs[at].unrepeated_begin + runs[at].chunk_begin;
  }
}

// Every line is walked (its newlines are counted anyway): a line is read
// where the database matched on it or a line-start test
// (PatternDef::at_line_start) accepts it. With kMarked, each line's end,
// label and whether it repeats come from scratch.lines (MarkLines); without,
// they are found here and no line repeats (a walk of its own: the choice
// made per line cost a chunk of short lines a tenth).
template <bool kMarked>
void WalkLines(const LogScanner::Impl& impl, std::string_view data, const MatchScratch& scratch,
               ChunkReading& reading) {
  const std::vector<MatchEvent>& events = scratch.events;
  uint64_t index = 0;
  size_t next_event = 0;
  // The chunk's last step line, for the copies of it that follow
  // (ChunkReading::Line::copy_of_back): where the database matched on it,
  // its label's size and the text after it as read, and what a copy's entry
  // takes of it, kept here (read back from its entry, a whole Line whose
  // fields were just written one by one, it stalled on store forwarding: a
  // twentieth of the walk, perf annotate).
  struct PreviousStepLine {
    bool known = false;
    uint32_t ids_begin = 0, ids_end = 0;
    StepLineRead read;
    uint64_t index = 0;
    size_t start = 0;
    size_t events_begin = 0, events_end = 0;
    size_t label = 0;
    std::string_view after_label;
  };
  PreviousStepLine previous;
  // The line before, for a line that repeats it (MarkLines).
  struct LineBefore {
    bool matched = false, step_line = false;
    uint32_t ids_begin = 0, ids_end = 0;
    StepLineRead read;
  } before;
  for (size_t start = 0; start < data.size();) {
    const MatchScratch::LineMark* marked_line = kMarked ? &scratch.lines[index] : nullptr;
    size_t end = data.size();
    if constexpr (kMarked) {
      end = marked_line->end;
    } else if (const void* found = std::memchr(data.data() + start, '\n', data.size() - start)) {
      end = static_cast<size_t>(static_cast<const char*>(found) - data.data());
    }
    const bool repeats = kMarked && marked_line->repeats;
    const bool nl = end < data.size();
    const size_t ids_begin = reading.ids.size();
    const size_t events_begin = next_event;
    while (next_event < events.size() && events[next_event].to <= end + 1) ++next_event;
    size_t text_end = end;  // without the '\r' of a "\r\n" end
    while (text_end > start && data[text_end - 1] == '\r') --text_end;
    const std::string_view text = data.substr(start, text_end - start);
    // The line's srun label, read once where it is asked for: its task and
    // size, and the text after it as read (with any '\r' before the newline).
    struct Label {
      int task;
      size_t size;
      std::string_view after;
    };
    std::optional<Label> label;
    bool label_read = false;
    auto read_label = [&]() -> const std::optional<Label>& {
      if (!label_read) {
        label_read = true;
        if constexpr (kMarked) {
          if (marked_line->task >= 0) {
            const size_t size = marked_line->label;
            label = Label{marked_line->task, size, data.substr(start + size, end - start - size)};
          }
        } else {
          if (const auto [task, rest] = SplitTaskLabel(text); task) {
            const size_t size = text.size() - rest.size();
            label = Label{*task, size, data.substr(start + size, end - start - size)};
          }
        }
      }
      return label;
    };
    // What the line's entry takes: its ids' range in reading.ids and, on a
    // step line, what ReadStepLine read of it.
    bool matched = false;
    bool step_line = false;
    uint32_t entry_ids_begin = 0, entry_ids_end = 0;
    StepLineRead step_read;
    // Another task's copy of the last step line: the same matches at the
    // same places after a label as long, the same text after it. What the
    // walk reads of a line does not depend on its label's number
    // (scan_patterns_test.cc, step_lines_test.cc): it takes that line's
    // ranges and reading, shared, not read again.
    const bool copy =
        !repeats && previous.known &&
        next_event - events_begin == previous.events_end - previous.events_begin &&
        index - previous.index <= UINT32_MAX && read_label() && label->size == previous.label &&
        label->after == previous.after_label &&
        std::equal(events.begin() + static_cast<std::ptrdiff_t>(events_begin),
                   events.begin() + static_cast<std::ptrdiff_t>(next_event),
                   events.begin() + static_cast<std::ptrdiff_t>(previous.events_begin),
                   [&](const MatchEvent& here, const MatchEvent& there) {
                     return here.id == there.id && here.to - start == there.to - previous.start;
                   });
    if (repeats) {
      matched = before.matched;
      step_line = before.step_line;
      entry_ids_begin = before.ids_begin;
      entry_ids_end = before.ids_end;
      step_read = before.read;
    } else if (copy) {
      matched = step_line = true;
      entry_ids_begin = previous.ids_begin;
      entry_ids_end = previous.ids_end;
      step_read = previous.read;
    } else {
      for (size_t e = events_begin; e < next_event; ++e) reading.ids.push_back(events[e].id);
      // With its newline, as the database saw it (`\s` matches it).
      const LineStart line_start(data.substr(start, (nl ? end + 1 : end) - start));
      for (const auto& walked : impl.every_line_tests) {
        if (walked.test(line_start.line)) reading.ids.push_back(walked.id);
      }
      if (line_start.stamp_possible) {
        for (const auto& walked : impl.line_start_tests) {
          if (walked.test(line_start)) reading.ids.push_back(walked.id);
        }
      }
      // At the matches their carriers end with a byte of theirs
      // (PatternDef::carried_test).
      for (size_t e = events_begin; e < next_event; ++e) {
        const size_t match_end = events[e].to - start;
        if (match_end == 0) continue;
        const auto last = static_cast<unsigned char>(line_start.line[match_end - 1]);
        for (const auto& carried : impl.carried_after[last]) {
          if (events[e].id == carried.carrier && carried.test(line_start.line, match_end))
            reading.ids.push_back(carried.id);
        }
      }
      if (reading.ids.size() > ids_begin) {
        auto first = reading.ids.begin() + static_cast<std::ptrdiff_t>(ids_begin);
        SortUnique(reading.ids, first);
        matched = true;
        entry_ids_begin = static_cast<uint32_t>(ids_begin);
        entry_ids_end = static_cast<uint32_t>(reading.ids.size());
        const std::span<const unsigned> ids(&*first, reading.ids.size() - ids_begin);
        step_line = std::any_of(ids.begin(), ids.end(),
                                [&](unsigned id) { return impl.kinds[id] == Kind::kStep; });
        if (step_line) step_read = ReadStepLine(impl, text, ids, reading.samples);
      }
    }
    if (matched) {
      // Built field by field where it lies in reading.lines: a whole Line
      // built on the stack and copied in stalled on store forwarding, a
      // twelfth of the scan (perf annotate).
      ChunkReading::Line& line = reading.lines.emplace_back();
      line.index = index;
      line.start = start;
      line.end = text_end;
      line.ids_begin = entry_ids_begin;
      line.ids_end = entry_ids_end;
      line.samples_begin = step_read.samples_begin;
      line.samples_end = step_read.samples_end;
      line.generic_confirmed = step_read.generic_confirmed;
      line.generic_sample = step_read.generic_sample;
      if (copy || (repeats && step_line && read_label()))
        line.copy_of_back = static_cast<uint32_t>(index - previous.index);
      if (step_line && read_label()) line.task = label->task;
    }
    before = {matched, step_line, entry_ids_begin, entry_ids_end, step_read};
    if (repeats) {
      // Its text after the label is the last step line's: only where it lies moves.
      if (step_line && read_label()) previous.index = index;
    } else if (step_line) {
      if (read_label()) {
        previous.known = true;
        previous.ids_begin = entry_ids_begin;
        previous.ids_end = entry_ids_end;
        previous.read = step_read;
        previous.index = index;
        previous.start = start;
        previous.events_begin = events_begin;
        previous.events_end = next_event;
        previous.label = label->size;
        previous.after_label = label->after;
      } else {
        previous.known = false;  // no label: no other task's copy of it to know
      }
    }
    if (!nl) break;
    ++index;
    start = end + 1;
  }
  reading.newlines = index;
}

}  // namespace

void ReadChunk(const LogScanner::Impl& impl, std::string_view data, MatchScratch& scratch,
               ChunkReading& reading) {
  reading.ids.clear();
  reading.lines.clear();
  reading.samples.clear();
  // Room for a chunk of lines of 64 bytes or more, all matched, taken at
  // once: grown by doubling, the lines would use twice the reading's memory.
  reading.lines.reserve(data.size() / 64);
  scratch.events.clear();
  // Lines that repeat the one before them (another task's copy under
  // srun -l) are not scanned again where they are an eighth of the chunk
  // or more, in runs of 64 bytes or more on average: with less, copying
  // the other lines apart would cost more than scanning the repeats.
  reading.repeats = 0;
  const std::optional<Repeats> repeated = MarkLines(data, scratch);
  const bool marked = repeated.has_value();
  if (marked && !impl.options.rescan_repeated_lines && repeated->lines > 0 &&
      repeated->bytes >= data.size() / 8 && repeated->bytes >= 64 * repeated->runs &&
      scratch.unrepeated.size() >= data.size()) {
    MatchUnrepeated(impl, data, scratch);
    reading.repeats = repeated->lines;
  } else {
    for (MatchScratch::LineMark& mark : scratch.lines) mark.repeats = false;
    hs_scan(impl.database, data.data(), static_cast<unsigned>(data.size()), 0, scratch.hs, OnMatch,
            &scratch.events);
    SortByEnd(scratch.events);
  }
  if (marked) {
    WalkLines<true>(impl, data, scratch, reading);
  } else {
    WalkLines<false>(impl, data, scratch, reading);
  }
}

}  // namespace jobmon::triage
