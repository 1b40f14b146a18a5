#include "chunk_reading.h"

#include <algorithm>
#include <cstring>
#include <span>

namespace jobmon::triage {
namespace {

int OnMatch(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
            void* context) {
  static_cast<std::vector<MatchEvent>*>(context)->push_back({to, id});
  return 0;
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
  for (size_t start = 0; start < data.size();) {
    const void* nl = std::memchr(data.data() + start, '\n', data.size() - start);
    const size_t end = nl ? static_cast<const char*>(nl) - data.data() : data.size();
    const size_t ids_begin = reading.ids.size();
    const size_t events_begin = next_event;
    while (next_event < events.size() && events[next_event].to <= end + 1)
      reading.ids.push_back(events[next_event++].id);
    // With its newline, as the database saw it (`\s` matches it).
    const LineStart line_start(data.substr(start, (nl ? end + 1 : end) - start));
    for (const auto& walked : impl.line_start_tests) {
      if (walked.test(line_start)) reading.ids.push_back(walked.id);
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
      std::sort(first, reading.ids.end());
      reading.ids.erase(std::unique(first, reading.ids.end()), reading.ids.end());
      size_t text_end = end;  // without the '\r' of a "\r\n" end
      while (text_end > start && data[text_end - 1] == '\r') --text_end;
      ChunkReading::Line line{index, start, text_end, static_cast<uint32_t>(ids_begin),
                              static_cast<uint32_t>(reading.ids.size())};
      const std::span<const unsigned> ids(&*first, reading.ids.size() - ids_begin);
      if (std::any_of(ids.begin(), ids.end(),
                      [&](unsigned id) { return impl.patterns[id].kind == Kind::kStep; })) {
        ReadStepLine(impl, data.substr(start, text_end - start), ids, line, reading.samples);
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
