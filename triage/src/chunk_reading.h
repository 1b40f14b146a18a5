#pragma once
// What is read of a chunk without the scan's state, on whichever thread
// matched it (match_ahead.h): the database's matches and the line-start
// patterns' tests, by line, and each step line's samples (pure parses). The scan state
// (scan_state.cc) then does only what depends on the lines before, so the two threads share a
// scan's work. Private to the scanner.

#include <hs/hs.h>

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "jobmon/triage/step_lines.h"
#include "scan_state.h"

namespace jobmon::triage {

// One pattern's match: the offset just past its last byte, the pattern's id.
struct MatchEvent {
  unsigned long long to;
  unsigned id;
};

// What one matching thread reuses from chunk to chunk: its Hyperscan
// scratch, the database's matches in the chunk it reads and the chunk's
// lines (needed only while it reads it: one of each per thread, not per
// chunk in flight). On a cache line of its own: the two threads' vectors
// grow at once.
struct alignas(64) MatchScratch {
  hs_scratch_t* hs = nullptr;
  std::vector<MatchEvent> events;
  // Each line of the chunk (MarkedLinesAtMost of them at most): where it
  // ends (its newline, or the chunk's end), its srun label, and whether it
  // repeats the line before it.
  struct LineMark {
    uint32_t end;   // a chunk is under 4 GiB: hs_scan takes its size as an unsigned
    int32_t task;   // its label's task; -1 without a label
    uint8_t label;  // the label's size: 15 at most (TaskLabelLength)
    bool repeats;
  };
  std::vector<LineMark> lines;
  // Where the lines that do not repeat are copied end to end, to be scanned
  // without the repeats (chunk_buffers.h: a chunk's size or more), and where
  // each run of them lies in the chunk and there.
  std::span<char> unrepeated;
  struct Run {
    uint32_t chunk_begin, unrepeated_begin, size;
  };
  std::vector<Run> runs;
};

struct ChunkReading {
  // Its vectors grow in `memory` (chunk_buffers.h), kept from chunk to chunk.
  explicit ChunkReading(std::pmr::memory_resource* memory)
      : ids(memory), lines(memory), samples(memory) {}

  // A line some pattern matched.
  struct Line {
    uint64_t index = 0;  // newlines before it in the chunk
    size_t start = 0;    // its text in the chunk: [start, end), without its "\n" or "\r\n"
    size_t end = 0;
    uint32_t ids_begin = 0, ids_end = 0;  // its patterns, sorted and unique, in `ids`
    // A step prefilter's line: each specific format's sample, in id order,
    // in `samples`; without one, the generic prefilter confirmed
    // (PatternDef::confirm) and then the generic counter's sample, last.
    uint32_t samples_begin = 0, samples_end = 0;
    bool generic_confirmed = false;
    bool generic_sample = false;  // the last sample is the generic counter's
    // Lines back to the step line before it in the chunk, where this line
    // is that line's copy from another task ("1: X" after "0: X": a label of
    // the same length, the same text after it, the database's same matches
    // there, or a line that repeats the one just before it); 0 where not.
    // Its patterns and samples are that line's (its ranges in `ids` and
    // `samples` are that line's own), not read again: what the walk reads
    // does not depend on the label's number (scan_patterns_test.cc,
    // step_lines_test.cc). The scan state takes its rank from that line's
    // (scan_state.cc).
    uint32_t copy_of_back = 0;
    int task = -1;  // a step line's srun label's task; -1: none
  };
  struct Sample {
    StepProfile profile;
    StepSample sample;
  };
  std::pmr::vector<unsigned> ids;
  std::pmr::vector<Line> lines;
  std::pmr::vector<Sample> samples;
  uint64_t newlines = 0;  // in the whole chunk
  uint64_t repeats = 0;   // lines read from the line before them, not scanned
};

// The most lines ReadChunk marks in a chunk of `bytes` (MatchScratch::lines,
// reserved once for it): it reads a chunk of shorter lines without marks.
size_t MarkedLinesAtMost(size_t bytes);

// Reads `data` (line-aligned, or a piece of an over-long line) into
// `reading`. Reads nothing but its arguments, so one chunk is read on one
// thread while the scan state consumes the one before on another.
void ReadChunk(const LogScanner::Impl& impl, std::string_view data, MatchScratch& scratch,
               ChunkReading& reading);

}  // namespace jobmon::triage
