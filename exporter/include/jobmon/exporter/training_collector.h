#pragma once
#include <chrono>
#include <map>
#include <optional>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// tb_step and tb_<sanitized tag> from the newest events.out.tfevents.* in a
// directory (searched recursively) whose change time is not older than
// `not_before`, so a previous job's file is never picked. Reads only the
// bytes added since the last collection (masked CRC-32C checked) and
// exports the latest value of each tag. No file yet (compilation) is a
// success with no series.
class TrainingCollector : public Collector {
 public:
  TrainingCollector(std::string dir, std::chrono::system_clock::time_point not_before)
      : dir_(std::move(dir)), not_before_(not_before) {}
  Expected<Families> Collect() override;

 private:
  std::string dir_;
  std::chrono::system_clock::time_point not_before_;
  std::string file_;
  uint64_t offset_ = 0;
  std::string pending_;  // a record still being written
  std::optional<int64_t> step_;
  std::map<std::string, double> latest_;
};

// "learning/loss" -> "tb_learning_loss": Prometheus name characters only.
std::string TensorBoardMetricName(std::string_view tag);

}  // namespace jobmon::exporter
