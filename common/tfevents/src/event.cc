#include "jobmon/tfevents/event.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "jobmon/tfevents/record.h"
#include "tfevents.pb.h"

namespace jobmon::tfevents {

namespace pb = jobmon::tfevents::proto;

std::string EncodeEvent(const ScalarEvent& event) {
  pb::Event message;
  message.set_wall_time(event.wall_time);
  message.set_step(event.step);
  if (!event.file_version.empty()) {
    message.set_file_version(event.file_version);
  } else {
    pb::Summary* summary = message.mutable_summary();
    for (const Scalar& scalar : event.scalars) {
      pb::Summary::Value* value = summary->add_value();
      value->set_tag(scalar.tag);
      value->set_simple_value(static_cast<float>(scalar.value));
    }
  }
  return message.SerializeAsString();
}

namespace {

bool TensorScalar(const pb::TensorProto& tensor, double* out) {
  constexpr int kFloat = 1, kDouble = 2;
  if (tensor.float_val_size() == 1) {
    *out = tensor.float_val(0);
  } else if (tensor.double_val_size() == 1) {
    *out = tensor.double_val(0);
  } else if (tensor.dtype() == kFloat && tensor.tensor_content().size() == sizeof(float)) {
    float value;
    std::memcpy(&value, tensor.tensor_content().data(), sizeof value);
    *out = value;
  } else if (tensor.dtype() == kDouble && tensor.tensor_content().size() == sizeof(double)) {
    std::memcpy(out, tensor.tensor_content().data(), sizeof(double));
  } else {
    return false;
  }
  return true;
}

}  // namespace

Expected<ScalarEvent> DecodeEvent(std::string_view payload) {
  pb::Event message;
  if (!message.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Error{"not a TensorBoard Event protobuf"};
  }
  ScalarEvent event;
  event.step = message.step();
  event.wall_time = message.wall_time();
  if (message.has_file_version()) event.file_version = message.file_version();
  if (message.has_summary()) {
    for (const pb::Summary::Value& value : message.summary().value()) {
      double number = 0;
      if (value.has_simple_value()) {
        event.scalars.push_back({value.tag(), value.simple_value()});
      } else if (value.has_tensor() && TensorScalar(value.tensor(), &number)) {
        event.scalars.push_back({value.tag(), number});
      }
    }
  }
  return event;
}

Expected<EventFileWriter> EventFileWriter::Create(const std::string& dir, const std::string& host,
                                                  double wall_time) {
  // Like TensorFlow's and tensorboardX's writers: the log dir is created.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path =
      dir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(wall_time)) + "." + host;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{"cannot create " + path + ": " + std::strerror(errno)};
  EventFileWriter writer(fd, path);
  ScalarEvent version;
  version.wall_time = wall_time;
  version.file_version = "brain.Event:2";
  if (auto written = writer.Write(version); !written) return written.error();
  return writer;
}

EventFileWriter::EventFileWriter(EventFileWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

EventFileWriter& EventFileWriter::operator=(EventFileWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

EventFileWriter::~EventFileWriter() {
  if (fd_ >= 0) close(fd_);
}

Expected<void> EventFileWriter::Write(const ScalarEvent& event) {
  std::string record = FrameRecord(EncodeEvent(event));
  ssize_t n = write(fd_, record.data(), record.size());
  if (n != static_cast<ssize_t>(record.size())) {
    return Error{"write " + path_ + ": " + (n < 0 ? std::strerror(errno) : "short write")};
  }
  return {};
}

}  // namespace jobmon::tfevents
