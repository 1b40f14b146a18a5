#pragma once
// The state of one scan over line-aligned chunks (what the Hyperscan
// database matched, read by ReadChunk, kept into ScanFacts), and the
// compiled scanner it reads. Private to the scanner: log_scan.cc feeds it
// from a file.

#include <hs/hs.h>
#include <re2/re2.h>

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "jobmon/triage/log_scan.h"
#include "scan_patterns.h"

namespace jobmon::triage {

struct LogScanner::Impl {
  std::vector<PatternDef> patterns;
  std::vector<Kind> kinds;  // each pattern's kind, by id: read on every line, packed
  hs_database_t* database = nullptr;
  hs_scratch_t* prototype_scratch = nullptr;
  std::unique_ptr<RE2> custom_step;
  ScanOptions options;
  // The patterns read on every line as the scan walks them, not compiled
  // (PatternDef::at_line_start), in id order.
  struct WalkedPattern {
    unsigned id;
    LineStartTest test;
  };
  std::vector<WalkedPattern> line_start_tests;
  // The patterns read on every line as the scan walks them
  // (PatternDef::on_every_line), in id order.
  struct EveryLinePattern {
    unsigned id;
    LineTest test;
  };
  std::vector<EveryLinePattern> every_line_tests;
  // The patterns read at their carrier's matches, not compiled
  // (PatternDef::carried_test), in id order, by the last byte of the
  // carrier's match.
  struct CarriedPattern {
    unsigned id;
    unsigned carrier;
    CarriedTest test;
  };
  std::array<std::vector<CarriedPattern>, 256> carried_after;

  ~Impl() {
    if (prototype_scratch) hs_free_scratch(prototype_scratch);
    if (database) hs_free_database(database);
  }
};

struct ChunkReading;  // chunk_reading.h

class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  // `data` ends at a line end, or is a piece of a line longer than the
  // buffer; `reading` is ReadChunk's of it.
  virtual void Chunk(std::string_view data, const ChunkReading& reading) = 0;
  virtual void Finish() = 0;
};

// A scan's state writing into `facts`; both must outlive it.
std::unique_ptr<ChunkSink> NewScanState(const LogScanner::Impl& impl, ScanFacts& facts);

}  // namespace jobmon::triage
