#pragma once
// What the collectors' tests share: the fixtures' root and its procfs tree,
// a scrape as text, one sample's value, and a scratch dir and a writable copy
// of a fixture tree, both removed with the test.

#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter::test_support {

namespace fs = std::filesystem;
inline const std::string kFixtures = JOBMON_FIXTURES;
// The procfs tree of one node.
inline const std::string kFixture = kFixtures + "/procfs/basic";

inline std::string Text(const Families& families) {
  return prometheus::TextSerializer().Serialize(families);
}

inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(kFixtures + "/" + relative, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() /
             ("jobmon-" + tag + "-" + std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// A writable copy of a fixture tree, removed at the end of the test.
class TreeCopy {
 public:
  explicit TreeCopy(const std::string& fixture, const std::string& tag)
      : dir_(fs::temp_directory_path() / ("jobmon-" + tag + "-" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::copy(fixture, dir_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TreeCopy() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }
  void Write(const std::string& relative, const std::string& text) const {
    std::ofstream(dir_ / relative) << text;
  }

 private:
  fs::path dir_;
};

// The value of the sample line that starts with `series` ("name{labels}"), or
// nullopt if there is none.
inline std::optional<double> Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

}  // namespace jobmon::exporter::test_support
