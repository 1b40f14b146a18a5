#pragma once
// What the diagnose access tests share: a temp dir, small files, a fake
// TSDB block (a meta.json is all InspectTsdb reads).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace jobmon::diagnose::testing {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir()
      : path(fs::temp_directory_path() /
             ("jobmon-diagnose-test-" + std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

inline void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline void FakeBlock(const fs::path& tsdb, const std::string& ulid, int64_t min_ms,
                      int64_t max_ms) {
  Write(tsdb / ulid / "meta.json",
        "{\"ulid\":\"" + ulid + "\",\"minTime\":" + std::to_string(min_ms) +
            ",\"maxTime\":" + std::to_string(max_ms) + ",\"version\":1}");
  Write(tsdb / ulid / "index", "index");
  Write(tsdb / ulid / "chunks" / "000001", "chunks");
}

}  // namespace jobmon::diagnose::testing
