#pragma once
// TensorBoard events carrying scalars: encoding, decoding, and an event file
// writer that produces what tf.summary writes (the fake trainer uses it;
// the exporter and the monitor read such files).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::tfevents {

struct Scalar {
  std::string tag;
  double value = 0;
};

struct ScalarEvent {
  int64_t step = 0;
  double wall_time = 0;
  std::vector<Scalar> scalars;
  std::string file_version;  // set only on the first event of a file
};

std::string EncodeEvent(const ScalarEvent& event);

// Accepts simple_value and one-element float/double tensors (TF2 writes
// scalars as tensors); other summary values are skipped.
Expected<ScalarEvent> DecodeEvent(std::string_view payload);

class EventFileWriter {
 public:
  // Creates `<dir>/events.out.tfevents.<unix seconds>.<host>` and writes the
  // "brain.Event:2" version record.
  static Expected<EventFileWriter> Create(const std::string& dir, const std::string& host,
                                          double wall_time);
  EventFileWriter(EventFileWriter&& other) noexcept;
  EventFileWriter& operator=(EventFileWriter&& other) noexcept;
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;
  ~EventFileWriter();

  // Appends one framed event with a single write(), so readers never see a
  // torn record between whole ones.
  Expected<void> Write(const ScalarEvent& event);
  const std::string& path() const { return path_; }

 private:
  EventFileWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace jobmon::tfevents
