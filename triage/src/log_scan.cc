#include "jobmon/triage/log_scan.h"

#include <fcntl.h>
#include <hs/hs.h>
#include <re2/re2.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

#include "database_cache.h"
#include "jobmon/common/unique_fd.h"
#include "match_ahead.h"
#include "scan_patterns.h"
#include "scan_state.h"

// The scanner's file side: compiling the database, streaming a file
// through the scan state in line-aligned chunks of a fixed buffer.
namespace jobmon::triage {

LogScanner::LogScanner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogScanner::~LogScanner() = default;

Expected<std::shared_ptr<const LogScanner>> LogScanner::Default() {
  static std::mutex building;
  static std::shared_ptr<const LogScanner> built;
  std::lock_guard lock(building);
  if (!built) {
    auto created = Create({});
    if (!created) return created.error();
    built = std::move(created.value());
  }
  return built;
}

Expected<std::unique_ptr<LogScanner>> LogScanner::Create(const ScanOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->patterns = AllPatterns();
  for (const PatternDef& def : impl->patterns) impl->kinds.push_back(def.kind);
  for (unsigned id : options.patterns_left_out) {
    if (id >= impl->patterns.size())
      return Error{"pattern " + std::to_string(id) + " left out: the patterns are numbered 0 to " +
                   std::to_string(impl->patterns.size() - 1)};
  }
  std::vector<const char*> expressions;
  std::vector<unsigned> flags, ids;
  for (size_t i = 0; i < impl->patterns.size(); ++i) {
    const auto& left_out = options.patterns_left_out;
    if (std::find(left_out.begin(), left_out.end(), i) != left_out.end()) continue;
    const PatternDef& def = impl->patterns[i];
    auto add_expression = [&](const std::string& expression) {
      expressions.push_back(expression.c_str());
      flags.push_back(def.flags);
      ids.push_back(static_cast<unsigned>(i));
    };
    if (def.at_line_start)
      impl->line_start_tests.push_back({static_cast<unsigned>(i), def.at_line_start});
    if (def.on_every_line) {
      impl->every_line_tests.push_back({static_cast<unsigned>(i), def.on_every_line});
      continue;
    }
    const bool carried =
        def.carried_test && std::find(left_out.begin(), left_out.end(),
                                      static_cast<unsigned>(def.carrier)) == left_out.end();
    if (carried) {
      for (unsigned char last : def.carried_after) {
        impl->carried_after[last].push_back(
            {static_cast<unsigned>(i), static_cast<unsigned>(def.carrier), def.carried_test});
      }
      continue;
    }
    if (def.parts.empty() && !def.at_line_start) add_expression(def.expression);
    for (const std::string& part : def.parts) add_expression(part);
  }
  // Compiled once per pattern set and machine (database_cache.h).
  std::string key = std::string(hs_version()) + "\n";
  for (size_t i = 0; i < expressions.size(); ++i) {
    key += std::to_string(ids[i]) + " " + std::to_string(flags[i]) + " " + expressions[i] + "\n";
  }
  const std::string cache = DatabaseCacheDir();
  impl->database = LoadCachedDatabase(cache, key);
  const bool compiled = impl->database == nullptr;
  hs_compile_error_t* error = nullptr;
  if (!impl->database && hs_compile_multi(expressions.data(), flags.data(), ids.data(),
                                          static_cast<unsigned>(expressions.size()), HS_MODE_BLOCK,
                                          nullptr, &impl->database, &error) != HS_SUCCESS) {
    std::string message = error && error->message ? error->message : "unknown";
    int index = error ? error->expression : -1;
    hs_free_compile_error(error);
    return Error{"signature database: " + message + " (pattern " +
                 (index >= 0 ? expressions[static_cast<size_t>(index)] : "?") + ")"};
  }
  if (compiled) StoreCachedDatabase(cache, key, impl->database);
  if (hs_alloc_scratch(impl->database, &impl->prototype_scratch) != HS_SUCCESS) {
    return Error{"cannot allocate Hyperscan scratch space"};
  }
  if (!options.custom_step_regex.empty()) {
    impl->custom_step = std::make_unique<RE2>(options.custom_step_regex, RE2::Quiet);
    if (!impl->custom_step->ok()) {
      return Error{"bad step regex: " + impl->custom_step->error()};
    }
    const auto& groups = impl->custom_step->NamedCapturingGroups();
    int time_groups = 0;
    for (const char* name : {"seconds", "ms", "milliseconds"}) {
      if (groups.count(name)) time_groups += groups.at(name) == 2 ? 1 : 100;
    }
    if (!groups.count("step") || groups.at("step") != 1 || time_groups > 1 ||
        impl->custom_step->NumberOfCapturingGroups() != static_cast<int>(groups.size())) {
      return Error{
          "the step regex needs the named group (?P<step>...) first and optionally one of "
          "(?P<seconds>...), (?P<ms>...) or (?P<milliseconds>...) second (a unit written after "
          "the number, like \"23 ms\" or \"0.5s\", is honoured), and no other capturing groups"};
    }
  }
  return std::unique_ptr<LogScanner>(new LogScanner(std::move(impl)));
}

namespace {

// One file (from its current offset to EOF) into `state`, in line-aligned
// chunks of `capacity` bytes at most (and one for a closing newline), read
// straight into the chunks' buffers.
Expected<void> ScanOneFd(int fd, MatchAhead& state, size_t capacity, ScanFacts& facts) {
  struct stat st {};
  uint64_t size_at_start = fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  bool in_long_line = false;
  std::string carry;  // a line the last read began and did not end
  for (;;) {
    const std::span<char> buffer = state.Acquire();  // capacity + 1 bytes
    std::memcpy(buffer.data(), carry.data(), carry.size());
    size_t filled = carry.size();
    carry.clear();
    ssize_t n = 0;
    do {
      n = read(fd, buffer.data() + filled, capacity - filled);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Error{std::string("read: ") + std::strerror(errno)};
    facts.bytes += static_cast<uint64_t>(n);
    filled += static_cast<size_t>(n);
    if (n == 0) {
      if (filled > 0) {
        buffer[filled++] = '\n';
        state.Submit(filled);
      }
      break;
    }
    const void* last_nl = memrchr(buffer.data(), '\n', filled);
    if (last_nl) {
      size_t upto = static_cast<const char*>(last_nl) - buffer.data() + 1;
      carry.assign(buffer.data() + upto, filled - upto);
      state.Submit(upto);
      in_long_line = false;
    } else if (filled == capacity) {
      // A line longer than the buffer: scan it piecewise, memory stays bounded.
      if (!in_long_line) ++facts.long_lines;
      in_long_line = true;
      state.Submit(filled);
    } else {
      carry.assign(buffer.data(), filled);  // no line ended yet: read on
    }
  }
  // Truncated under us: the file is now shorter than where it was at the
  // start, or than the offset we read up to.
  off_t offset = lseek(fd, 0, SEEK_CUR);
  if (fstat(fd, &st) == 0 &&
      (static_cast<uint64_t>(st.st_size) < size_at_start || (offset >= 0 && st.st_size < offset))) {
    facts.shrank_while_reading = true;
  }
  return {};
}

}  // namespace

Expected<ScanFacts> LogScanner::ScanFd(int fd) const { return ScanFds({fd}); }

Expected<ScanFacts> LogScanner::ScanFds(const std::vector<int>& fds) const {
  ScanFacts facts;
  std::unique_ptr<ChunkSink> sink = NewScanState(*impl_, facts);
  const size_t capacity = std::max<size_t>(impl_->options.buffer_bytes, 4096);
  // A byte more for the closing newline of a log that ends without one.
  MatchAhead state(*impl_, *sink, impl_->prototype_scratch, capacity + 1);
  if (!state.ok()) return Error{"cannot clone Hyperscan scratch space"};
  for (int fd : fds) {
    if (auto read = ScanOneFd(fd, state, capacity, facts); !read) return read.error();
  }
  state.Flush();
  sink->Finish();
  return facts;
}

namespace {

// A log to scan from its start: never a directory, read ahead.
Expected<UniqueFd> OpenLog(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  struct stat st {};
  if (fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) return Error{path + " is a directory"};
  posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  return fd;
}

// A memfd holding `text`, at its start: it behaves like a file (a pipe
// would block on large texts).
Expected<UniqueFd> TextFd(std::string_view text) {
  UniqueFd fd(memfd_create("jobmon-scan", MFD_CLOEXEC));
  if (!fd.valid()) return Error{std::string("memfd_create: ") + std::strerror(errno)};
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd.get(), text.data() + written, text.size() - written);
    if (n <= 0) return Error{"memfd write failed"};
    written += static_cast<size_t>(n);
  }
  lseek(fd.get(), 0, SEEK_SET);
  return fd;
}

}  // namespace

Expected<ScanFacts> LogScanner::ScanFile(const std::string& path) const {
  auto fd = OpenLog(path);
  if (!fd) return fd.error();
  return ScanFd(fd->get());
}

Expected<ScanFacts> LogScanner::ScanText(std::string_view text) const {
  auto fd = TextFd(text);
  if (!fd) return fd.error();
  return ScanFd(fd->get());
}

Expected<ScanFacts> LogScanner::ScanFileThenText(const std::string& path,
                                                 std::string_view more) const {
  auto file = OpenLog(path);
  if (!file) return file.error();
  auto text = TextFd(more);
  if (!text) return text.error();
  return ScanFds({file->get(), text->get()});
}

}  // namespace jobmon::triage
