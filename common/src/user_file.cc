#include "jobmon/common/user_file.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "jobmon/common/fs_identity.h"

namespace jobmon {

std::optional<JobUser> LookUpJobUser(const std::string& name) {
  if (name.empty()) return std::nullopt;
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return std::nullopt;
  }
  return JobUser{found->pw_uid, found->pw_gid};
}
namespace {

std::string Describe(mode_t mode) {
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// `follow_links`: a path the caller named itself, read with its own rights.
Expected<UserFile> OpenAsCaller(const std::string& path, UserFileKind kind, bool follow_links) {
  // O_PATH opens nothing: no FIFO wait, no device driver open. O_NOFOLLOW
  // with O_PATH gives a descriptor of the symlink itself, which fstat shows.
  UniqueFd handle(open(path.c_str(), O_PATH | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW)));
  if (!handle.valid()) return Error{path + ": " + std::strerror(errno)};
  UserFile file;
  if (fstat(handle.get(), &file.st) != 0) return Error{path + ": " + std::strerror(errno)};
  const bool want_dir = kind == UserFileKind::kDirectory;
  if (want_dir ? !S_ISDIR(file.st.st_mode) : !S_ISREG(file.st.st_mode)) {
    return Error{path + ": refused: " + Describe(file.st.st_mode) +
                 (want_dir ? ", expected a directory" : ", expected a regular file")};
  }
  // Reopen the very inode checked above; the permission check happens here.
  const std::string self = "/proc/self/fd/" + std::to_string(handle.get());
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (want_dir ? O_DIRECTORY : 0);
  file.fd.reset(open(self.c_str(), flags));
  if (!file.fd.valid()) return Error{path + ": " + std::strerror(errno)};
  struct stat now {};
  if (fstat(file.fd.get(), &now) != 0 || now.st_ino != file.st.st_ino ||
      now.st_dev != file.st.st_dev) {
    return Error{path + ": changed while being opened"};
  }
  file.st = now;
  return file;
}

}  // namespace

bool UserCanRead(const struct stat& st, const JobUser& user) {
  if (user.uid == 0) return true;
  const bool dir = S_ISDIR(st.st_mode);
  if (st.st_uid == user.uid) {
    return (st.st_mode & S_IRUSR) && (!dir || (st.st_mode & S_IXUSR));
  }
  if (st.st_gid == user.gid) {
    return (st.st_mode & S_IRGRP) && (!dir || (st.st_mode & S_IXGRP));
  }
  return (st.st_mode & S_IROTH) && (!dir || (st.st_mode & S_IXOTH));
}

Expected<UserFile> OpenUserFile(const std::string& path, const UserFileOptions& options) {
  std::optional<FsIdentity> as_user;
  if (options.user) as_user.emplace(options.user->uid, options.user->gid);
  auto file = OpenAsCaller(path, options.kind, /*follow_links=*/false);
  if (!file) return file;
  if (options.user && !UserCanRead(file->st, *options.user)) {
    return Error{path + ": refused: not readable by uid " + std::to_string(options.user->uid)};
  }
  return file;
}

Expected<std::string> ReadFdRange(int fd, off_t offset, size_t length,
                                  std::chrono::milliseconds deadline) {
  // Chunked, so a slow filesystem is noticed between chunks.
  constexpr size_t kChunk = 1 << 20;
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  std::string out(length, '\0');
  size_t got = 0;
  while (got < length) {
    if (std::chrono::steady_clock::now() > give_up) {
      return Error{"read did not finish within " + std::to_string(deadline.count()) + " ms"};
    }
    size_t want = std::min(kChunk, length - got);
    ssize_t n = pread(fd, out.data() + got, want, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return Error{"read would block"};
    if (n < 0) return Error{std::string("read: ") + std::strerror(errno)};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

Expected<std::string> ReadUserFile(const std::string& path, size_t max_bytes,
                                   const UserFileOptions& options,
                                   std::chrono::milliseconds deadline) {
  auto file = OpenUserFile(path, options);
  if (!file) return file.error();
  if (static_cast<uint64_t>(file->st.st_size) > max_bytes) {
    return Error{path + ": refused: " + std::to_string(file->st.st_size) + " bytes, more than " +
                 std::to_string(max_bytes)};
  }
  // Sized from fstat, not the cap (a 1 MiB cap would cost 1 MiB for a
  // 200-byte manifest); one byte more tells whether it grew since, and then
  // the rest is read up to one byte past the cap, to tell growth that still
  // fits from growth past it.
  const size_t expected = static_cast<size_t>(file->st.st_size);
  auto text = ReadFdRange(file->fd.get(), 0, expected + 1, deadline);
  if (!text) return Error{path + ": " + text.error().message};
  if (text->size() > expected) {
    auto rest = ReadFdRange(file->fd.get(), static_cast<off_t>(text->size()),
                            max_bytes + 1 - text->size(), deadline);
    if (!rest) return Error{path + ": " + rest.error().message};
    text.value() += rest.value();
  }
  if (text->size() > max_bytes) {
    return Error{path + ": refused: grew past " + std::to_string(max_bytes) + " bytes"};
  }
  return text;
}

Expected<UserFile> OpenCallerFile(const std::string& path) {
  return OpenAsCaller(path, UserFileKind::kRegular, /*follow_links=*/true);
}

Expected<FilePrefix> ReadFilePrefix(const std::string& path, size_t max_bytes,
                                    std::chrono::milliseconds deadline) {
  auto file = OpenCallerFile(path);
  if (!file) return file.error();
  auto text = ReadFdRange(file->fd.get(), 0, max_bytes + 1, deadline);
  if (!text) return Error{path + ": " + text.error().message};
  FilePrefix out;
  out.cut = text->size() > max_bytes;
  out.text = std::move(text.value());
  if (out.cut) out.text.resize(max_bytes);
  return out;
}

}  // namespace jobmon
