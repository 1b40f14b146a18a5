#include "chunk_reading.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

namespace jobmon::triage {
namespace {

int OnMatch(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
            void* context) {
  static_cast<std::vector<MatchEvent>*>(context)->push_back({to, id});
  return 0;
}

// `ids` from `first` on, sorted, each once. A line holds a few: an
// insertion sort, without std::sort's set-up for each line.
void SortUnique(std::vector<unsigned>& ids, std::vector<unsigned>::iterator first) {
  for (auto it = first + 1; it < ids.end(); ++it) {
    for (auto at = it; at > first && *(at - 1) > *at; --at) std::iter_swap(at - 1, at);
  }
  ids.erase(std::unique(first, ids.end()), ids.end());
}

// A step prefilter's line: each specific format's sample, or else the
// generic counter's where its prefilter is confirmed.
void ReadStepLine(const LogScanner::Impl& impl, std::string_view text,
                  std::span<const unsigned> ids, ChunkReading::Line& line,
                  std::vector<ChunkReading::Sample>& samples) {
  line.samples_begin = static_cast<uint32_t>(samples.size());
  std::optional<unsigned> generic;
  for (unsigned id : ids) {
    const PatternDef& def = impl.patterns[id];
    if (def.kind != Kind::kStep) continue;
    const auto profile = static_cast<StepProfile>(def.arg);
    if (profile == StepProfile::kGeneric) {
      generic = id;
    } else if (auto sample = ParseStep(profile, text)) {
      samples.push_back({profile, *sample});
    }
  }
  if (generic && samples.size() == line.samples_begin) {
    const PatternDef& def = impl.patterns[*generic];
    line.generic_confirmed = !def.confirm || def.confirm(text);
    if (line.generic_confirmed) {
      if (auto sample = ParseStep(StepProfile::kGeneric, text)) {
        samples.push_back({StepProfile::kGeneric, *sample});
        line.generic_sample = true;
      }
    }
  }
  line.samples_end = static_cast<uint32_t>(samples.size());
}

}  // namespace

void ReadChunk(const LogScanner::Impl& impl, std::string_view data, hs_scratch_t* scratch,
               ChunkReading& reading) {
  std::vector<MatchEvent>& events = reading.events;
  events.clear();
  reading.ids.clear();
  reading.lines.clear();
  reading.samples.clear();
  hs_scan(impl.database, data.data(), static_cast<unsigned>(data.size()), 0, scratch, OnMatch,
          &events);
  auto by_end = [](const MatchEvent& a, const MatchEvent& b) { return a.to < b.to; };
  if (!std::is_sorted(events.begin(), events.end(), by_end)) {
    std::stable_sort(events.begin(), events.end(), by_end);
  }
  // Every line is walked (its newlines are counted anyway): a line is read
  // where the database matched on it or a line-start test
  // (PatternDef::at_line_start) accepts it.
  uint64_t index = 0;
  size_t next_event = 0;
  // The chunk's last step line, for the copies of it that follow
  // (ChunkReading::Line::copy_of_back).
  struct PreviousStepLine {
    ChunkReading::Line line;
    size_t label = 0;
    std::string_view after_label;
  };
  std::optional<PreviousStepLine> previous;
  for (size_t start = 0; start < data.size();) {
    const void* nl = std::memchr(data.data() + start, '\n', data.size() - start);
    const size_t end = nl ? static_cast<const char*>(nl) - data.data() : data.size();
    const size_t ids_begin = reading.ids.size();
    const size_t events_begin = next_event;
    while (next_event < events.size() && events[next_event].to <= end + 1)
      reading.ids.push_back(events[next_event++].id);
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
      size_t text_end = end;  // without the '\r' of a "\r\n" end
      while (text_end > start && data[text_end - 1] == '\r') --text_end;
      ChunkReading::Line line{index, start, text_end, static_cast<uint32_t>(ids_begin),
                              static_cast<uint32_t>(reading.ids.size())};
      const std::span<const unsigned> ids(&*first, reading.ids.size() - ids_begin);
      if (std::any_of(ids.begin(), ids.end(),
                      [&](unsigned id) { return impl.kinds[id] == Kind::kStep; })) {
        const std::string_view text = data.substr(start, text_end - start);
        const std::string_view after_label = WithoutTaskLabel(text);
        const size_t label = text.size() - after_label.size();
        const bool copy =
            previous && label > 0 && label == previous->label &&
            index - previous->line.index <= UINT32_MAX && after_label == previous->after_label &&
            std::equal(ids.begin(), ids.end(), reading.ids.begin() + previous->line.ids_begin,
                       reading.ids.begin() + previous->line.ids_end);
        if (copy) {
          line.samples_begin = static_cast<uint32_t>(reading.samples.size());
          for (uint32_t i = previous->line.samples_begin; i < previous->line.samples_end; ++i) {
            const ChunkReading::Sample sample = reading.samples[i];
            reading.samples.push_back(sample);
          }
          line.samples_end = static_cast<uint32_t>(reading.samples.size());
          line.generic_confirmed = previous->line.generic_confirmed;
          line.generic_sample = previous->line.generic_sample;
          line.copy_of_back = static_cast<uint32_t>(index - previous->line.index);
        } else {
          ReadStepLine(impl, text, ids, line, reading.samples);
        }
        previous = PreviousStepLine{line, label, after_label};
      }
      reading.lines.push_back(line);
    }
    if (!nl) break;
    ++index;
    start = end + 1;
  }
  reading.newlines = index;
}

}  // namespace jobmon::triage
