#include "access/tsdb_local.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "jobmon/common/user_file.h"

namespace jobmon::diagnose {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxMetaBytes = 1 << 20;

std::optional<std::string> ReadSmallFile(const fs::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > max_bytes) return std::nullopt;
  return text;
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(path, ec);
  if (ec) return fs::path(path).lexically_normal().string();
  std::string s = out.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

bool IsBlockDirName(std::string_view name) {
  if (name.size() != 26) return false;
  // Crockford's base32 leaves out I, L, O and U.
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= '0' && c <= '9') ||
           (c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U');
  });
}

Expected<LocalTsdb> InspectTsdb(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{dir + ": not a directory"};
  LocalTsdb out;
  fs::directory_iterator it(dir, ec);
  if (ec) return Error{dir + ": " + ec.message()};
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name == "lock") out.has_lock = true;
    if (name == "wal" && entry.is_directory(ec)) {
      fs::directory_iterator segments(entry.path(), ec);
      for (const auto& segment : segments) {
        if (segment.is_regular_file(ec) && segment.file_size(ec) > 0) out.has_wal = true;
      }
    }
    if (!IsBlockDirName(name) || !entry.is_directory(ec)) continue;
    // The job's user may make meta.json a FIFO, a device or a link to
    // another's file: only a regular file, no link, opened without waiting.
    auto text = ReadUserFile((entry.path() / "meta.json").string(), kMaxMetaBytes);
    if (!text) continue;
    auto meta = ParseBlockMeta(*text);
    if (!meta) return Error{(entry.path() / "meta.json").string() + ": " + meta.error().message};
    out.blocks.push_back(*meta);
  }
  std::sort(out.blocks.begin(), out.blocks.end(),
            [](const BlockMeta& a, const BlockMeta& b) { return a.range.min_ms < b.range.min_ms; });
  return out;
}

std::optional<MsRange> Union(std::optional<MsRange> into, const std::optional<MsRange>& other) {
  if (!other) return into;
  if (!into) return other;
  into->min_ms = std::min(into->min_ms, other->min_ms);
  into->max_ms = std::max(into->max_ms, other->max_ms);
  return into;
}

std::optional<MsRange> BlocksRange(const LocalTsdb& tsdb) {
  std::optional<MsRange> out;
  for (const auto& block : tsdb.blocks) out = Union(out, block.range);
  return out;
}

Expected<std::optional<TimeRange>> LocalTsdbRange(const std::string& dir) {
  auto tsdb = InspectTsdb(dir);
  if (!tsdb) return tsdb.error();
  auto range = BlocksRange(*tsdb);
  if (!range) return std::optional<TimeRange>();
  return std::optional<TimeRange>(range->seconds());
}

std::optional<std::string> TsdbPathOfCmdline(std::string_view cmdline) {
  std::vector<std::string_view> argv;
  size_t start = 0;
  while (start < cmdline.size()) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string_view::npos) end = cmdline.size();
    argv.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  if (argv.empty()) return std::nullopt;
  std::string_view program = argv[0].substr(argv[0].rfind('/') + 1);
  if (program != "prometheus") return std::nullopt;
  constexpr std::string_view kFlag = "--storage.tsdb.path";
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    if (!arg.starts_with(kFlag)) continue;
    arg.remove_prefix(kFlag.size());
    if (arg.starts_with("=")) return std::string(arg.substr(1));
    if (arg.empty() && i + 1 < argv.size()) return std::string(argv[i + 1]);
  }
  return std::nullopt;
}

std::optional<LiveServer> FindLiveServer(const std::string& dir, const std::string& procfs) {
  const std::string lock_path = dir + "/lock";
  int fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd >= 0) {
    // A shared lock fails while Prometheus holds its exclusive one; when
    // it succeeds it is dropped at once (and the file left as it was).
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!held) flock(fd, LOCK_UN);
    close(fd);
    if (held) return LiveServer{0, lock_path + " is locked"};
  }
  const std::string wanted = Canonical(dir);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(procfs, ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    auto cmdline = ReadSmallFile(entry.path() / "cmdline", 1 << 16);
    if (!cmdline) continue;
    auto path = TsdbPathOfCmdline(*cmdline);
    if (!path) continue;
    // A relative path is relative to that process's working directory.
    std::string resolved = *path;
    if (!resolved.starts_with("/")) {
      std::error_code link_ec;
      auto cwd = fs::read_symlink(entry.path() / "cwd", link_ec);
      if (link_ec) continue;
      resolved = (cwd / resolved).string();
    }
    if (Canonical(resolved) == wanted)
      return LiveServer{static_cast<pid_t>(std::stol(name)),
                        "prometheus pid " + name + " serves it (--storage.tsdb.path)"};
  }
  return std::nullopt;
}

Expected<void> CopyTsdbForServing(const std::string& from, const std::string& to, bool blocks_only,
                                  bool link_blocks) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return Error{from + ": not a directory"};
  if (mkdir(to.c_str(), 0700) != 0) return Error{to + ": " + std::strerror(errno)};
  for (const auto& top : fs::directory_iterator(from, ec)) {
    const std::string name = top.path().filename().string();
    const bool block = IsBlockDirName(name);
    const bool head = name == "wal" || name == "chunks_head";
    if (top.is_symlink(ec) || !top.is_directory(ec)) continue;  // lock, queries.active, ...
    if (!block && (blocks_only || !head)) continue;
    const fs::path target = fs::path(to) / name;
    fs::create_directory(target, ec);
    if (ec) return Error{target.string() + ": " + ec.message()};
    for (auto it = fs::recursive_directory_iterator(top.path(), ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path out = target / it->path().lexically_relative(top.path());
      // symlink_status: a link is never followed, whatever it points at.
      const auto type = it->symlink_status(ec).type();
      if (ec) return Error{it->path().string() + ": " + ec.message()};
      if (type == fs::file_type::directory) {
        fs::create_directory(out, ec);
        if (ec) return Error{out.string() + ": " + ec.message()};
        continue;
      }
      if (type != fs::file_type::regular) continue;
      if (block && link_blocks) {
        fs::create_hard_link(it->path(), out, ec);
        if (!ec) continue;
        ec.clear();  // another filesystem: copy
      }
      fs::copy_file(it->path(), out, ec);
      if (ec) return Error{it->path().string() + ": " + ec.message()};
    }
    if (ec) return Error{top.path().string() + ": " + ec.message()};
  }
  if (ec) return Error{from + ": " + ec.message()};
  return {};
}

}  // namespace jobmon::diagnose
