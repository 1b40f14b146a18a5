#include "jobmon/triage/ray_logs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <vector>

#include "jobmon/common/text_lines.h"
#include "jobmon/common/user_file.h"

namespace jobmon::triage {

std::optional<int> RayWorkerLogPid(std::string_view name) {
  if (!name.starts_with("worker-")) return std::nullopt;
  size_t dot = name.rfind('.');
  if (dot == name.npos || (name.substr(dot) != ".out" && name.substr(dot) != ".err"))
    return std::nullopt;
  std::string_view stem = name.substr(0, dot);
  size_t dash = stem.rfind('-');
  if (dash == stem.npos || dash + 1 == stem.size()) return std::nullopt;
  int pid = 0;
  auto [end, ec] = std::from_chars(stem.data() + dash + 1, stem.data() + stem.size(), pid);
  if (ec != std::errc() || end != stem.data() + stem.size() || pid <= 0) return std::nullopt;
  return pid;
}

std::string PrefixRayWorkerLines(std::string_view text, int pid) {
  std::string out, name;
  const std::string pid_part = "pid=" + std::to_string(pid) + ") ";
  for (std::string_view line : TextLines(text)) {
    if (line.starts_with(":actor_name:")) {
      name = std::string(line.substr(12));
      continue;
    }
    if (line.starts_with(":task_name:")) {
      name = std::string(line.substr(11));
      continue;
    }
    if (line.starts_with(":job_id:")) continue;
    out += '(';
    if (!name.empty()) out += name + ' ';
    out += pid_part;
    out += line;
    out += '\n';
  }
  return out;
}

namespace {

constexpr size_t kMaxWorkerFiles = 100000;

// Worker files of dir + sub into `files` ("/<sub>/<name>", pid); from the
// top, each subdirectory once (no deeper, no symlink followed).
void ListWorkerFiles(const std::string& dir, const std::string& sub,
                     std::vector<std::pair<std::string, int>>& files, std::error_code& error) {
  for (const auto& entry : std::filesystem::directory_iterator(dir + sub, error)) {
    if (files.size() >= kMaxWorkerFiles) break;
    const std::string name = entry.path().filename().string();
    std::error_code type_error;
    if (sub.empty() && entry.is_directory(type_error) && !entry.is_symlink(type_error)) {
      std::error_code ignored;  // an unreadable subdir costs its files only
      ListWorkerFiles(dir, "/" + name, files, ignored);
    } else if (auto pid = RayWorkerLogPid(name)) {
      files.emplace_back(sub + "/" + name, *pid);
    }
  }
}

}  // namespace

Expected<std::string> ReadRayWorkerLogs(const std::string& dir, size_t per_file, size_t total) {
  std::error_code ec;
  // (path relative to dir, pid): the dir's own worker files and those one
  // level down (a node's copy under ray-logs/<node>/, Ray's logs/old/).
  std::vector<std::pair<std::string, int>> files;
  ListWorkerFiles(dir, "", files, ec);
  if (ec) return Error{"--ray-logs " + dir + ": " + ec.message()};
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto& [name, pid] : files) {
    if (out.size() >= total) break;
    auto file = OpenUserFile(dir + name);  // regular files only, never blocking
    if (!file) continue;
    const size_t size = static_cast<size_t>(file->st.st_size);
    const size_t want = std::min({size, per_file, total - out.size()});
    auto text = ReadFdRange(file->fd.get(), static_cast<off_t>(size - want), want);
    if (!text) continue;
    std::string_view body = *text;
    if (want < size) {  // a cut: from the first whole line
      size_t nl = body.find('\n');
      body = nl == body.npos ? std::string_view() : body.substr(nl + 1);
    }
    out += PrefixRayWorkerLines(body, pid);
  }
  return out;
}

}  // namespace jobmon::triage
