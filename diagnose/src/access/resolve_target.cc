// ResolveTarget: what `jobmon diagnose <argument>` names, and where that
// job's TSDB is (tsdb_access.h).
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "jobmon/common/diag_dir.h"
#include "jobmon/common/run_command.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/diagnose/tsdb_local.h"
#include "jobmon/triage/line_facts.h"

namespace jobmon::diagnose {

namespace fs = std::filesystem;

namespace {

// The manifest is the job user's file: the log it names is read (maybe by
// root: the monitor, an admin) only when it is a regular file, not a link,
// owned by the job's user — never a file of someone else's it points at.
// A regular file (or a directory) that is no link, owned by `uid` or by
// whoever runs this.
bool OwnedPlain(const std::string& path, uint32_t uid, bool directory) {
  struct stat st {};
  if (path.empty() || lstat(path.c_str(), &st) != 0) return false;
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return false;
  return st.st_uid == uid || st.st_uid == geteuid();
}

bool IsJobsOwnLog(const std::string& path, uint32_t uid) {
  struct stat st {};
  return !path.empty() && lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid;
}

bool AllDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool HasData(const std::string& dir) {
  auto tsdb = InspectTsdb(dir);
  return tsdb && !tsdb->empty();
}

bool IsFile(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto out = fs::absolute(path, ec);
  return (ec ? fs::path(path) : out).lexically_normal().string();
}

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Expected<ResolvedTarget> ResolveDirectory(const std::string& argument) {
  const std::string dir = WithoutTrailingSlash(Absolute(argument));
  DiagLayout layout{dir};
  ResolvedTarget out;
  out.diag_dir = dir;
  std::error_code ec;
  if (fs::exists(layout.manifest(), ec)) {
    auto manifest = ReadManifest(layout.manifest());
    if (!manifest) return Error{layout.manifest() + ": " + manifest.error().message};
    out.kind = TargetKind::kDiagDir;
    out.manifest = *manifest;
    if (manifest->job_id) out.job_id = std::to_string(manifest->job_id);
    if (IsJobsOwnLog(manifest->job_log, manifest->uid)) out.log_path = manifest->job_log;
    // The manifest is the job user's: the paths it names are not trusted as
    // they are (root, the monitor or an admin, would unpack or copy whatever
    // they name and serve it on loopback). The archive is the diag dir's own
    // (where the archiver, run as the job's user, writes it); a TSDB
    // directory is used only when it is no link and its owner is the job's
    // user or the caller.
    const uint32_t owner = manifest->uid;
    if (OwnedPlain(layout.archive(), owner, false)) out.archive_path = layout.archive();
    // The diag dir's raw copy, else the head node's own TSDB when this
    // machine sees it (a live job on its head node, or a shared disk).
    if (OwnedPlain(layout.tsdb_dir(), owner, true) && HasData(layout.tsdb_dir()))
      out.tsdb_dir = layout.tsdb_dir();
    else if (OwnedPlain(manifest->tsdb_dir, owner, true) && HasData(manifest->tsdb_dir))
      out.tsdb_dir = manifest->tsdb_dir;
    return out;
  }
  if (HasData(dir)) {
    out.kind = TargetKind::kTsdbDir;
    out.diag_dir.clear();
    out.tsdb_dir = dir;
    return out;
  }
  if (IsFile(layout.archive()) || HasData(layout.tsdb_dir())) {
    out.kind = TargetKind::kDiagDir;  // without a manifest (copied by hand?)
    if (IsFile(layout.archive())) out.archive_path = layout.archive();
    if (HasData(layout.tsdb_dir())) out.tsdb_dir = layout.tsdb_dir();
    return out;
  }
  return Error{fmt::format(
      "{}: neither a diag dir (no {}, {}/ with data or {}) nor a TSDB (no ULID block with "
      "meta.json, no wal/ segment)",
      dir, kManifestFileName, kTsdbDirName, kArchiveFileName)};
}

Expected<ResolvedTarget> ResolveArchive(const std::string& argument) {
  ResolvedTarget out;
  out.kind = TargetKind::kArchive;
  out.archive_path = Absolute(argument);
  const std::string beside =
      (fs::path(out.archive_path).parent_path() / kManifestFileName).string();
  std::error_code ec;
  if (fs::exists(beside, ec)) {
    auto manifest = ReadManifest(beside);
    if (!manifest) return Error{beside + ": " + manifest.error().message};
    out.manifest = *manifest;
    out.diag_dir = fs::path(out.archive_path).parent_path().string();
    if (manifest->job_id) out.job_id = std::to_string(manifest->job_id);
    if (IsJobsOwnLog(manifest->job_log, manifest->uid)) out.log_path = manifest->job_log;
  }
  return out;
}

Expected<ResolvedTarget> ResolveLog(const std::string& argument) {
  const std::string log = Absolute(argument);
  auto job_id = JobIdOfLog(log);
  if (!job_id)
    return Error{log + ": no job id (no SLURM_JOB_ID= in its first lines, no number in its name)"};
  const std::string diag = DefaultDiagDirBeside(log, *job_id);
  std::error_code ec;
  if (!fs::is_directory(diag, ec))
    return Error{
        fmt::format("{}: job {}: no diag dir beside it ({} does not exist)", log, *job_id, diag)};
  auto out = ResolveDirectory(diag);
  if (!out) return out.error();
  ResolvedTarget target = std::move(out).value();
  target.kind = TargetKind::kLog;
  target.job_id = *job_id;
  target.log_path = log;
  return target;
}

Expected<ResolvedTarget> ResolveJobId(const std::string& job_id) {
  std::vector<std::string> looked;
  std::string log;
  auto scontrol = RunCommand({"scontrol", "show", "job", "-o", job_id}, std::chrono::seconds(10));
  if (scontrol && scontrol->exit_code == 0) {
    if (auto stdout_path = ParseScontrolStdOut(scontrol->output)) log = *stdout_path;
  }
  std::vector<std::string> candidates;
  if (!log.empty()) {
    candidates.push_back(DefaultDiagDirBeside(log, job_id));
  } else {
    looked.push_back(scontrol ? "scontrol show job " + job_id + ": no StdOut (job unknown?)"
                              : "scontrol: " + scontrol.error().message);
  }
  // The default pattern from here: `jobmon diagnose 1234` run where the
  // job's output went.
  candidates.push_back(Absolute(fmt::format("jobmon-diag-{}", job_id)));
  for (const auto& dir : candidates) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      looked.push_back(dir + ": no such directory");
      continue;
    }
    auto out = ResolveDirectory(dir);
    if (!out) return out.error();
    ResolvedTarget target = std::move(out).value();
    target.kind = TargetKind::kJobId;
    target.job_id = job_id;
    if (IsFile(log)) target.log_path = log;
    return target;
  }
  std::string message = "job " + job_id + ": no diag dir found";
  for (const auto& l : looked) message += "; " + l;
  return Error{message + " (pass the diag dir, the archive or the log instead)"};
}

}  // namespace

std::optional<std::string> ParseScontrolStdOut(std::string_view text) {
  auto field = [&](std::string_view key) -> std::optional<std::string> {
    // Fields are " Key=value" (one line with -o); a value runs to the next space.
    for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
      if (at != 0 && !std::isspace(static_cast<unsigned char>(text[at - 1]))) continue;
      size_t start = at + key.size();
      size_t end = text.find_first_of(" \t\n", start);
      std::string value(text.substr(start, end == std::string_view::npos ? end : end - start));
      if (value.empty() || value == "(null)") return std::nullopt;
      return value;
    }
    return std::nullopt;
  };
  auto out = field("StdOut=");
  if (!out) return std::nullopt;
  if (!out->starts_with("/")) {
    auto work = field("WorkDir=");
    if (!work) return std::nullopt;
    return (fs::path(*work) / *out).lexically_normal().string();
  }
  return out;
}

std::optional<std::string> JobIdOfLog(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line;
  for (int i = 0; i < 200 && std::getline(in, line); ++i) {
    if (line.size() > 4096) line.resize(4096);
    if (auto id = triage::ParseHeaderJobId(line); id && AllDigits(*id)) return std::string(*id);
  }
  const std::string name = fs::path(log_path).filename().string();
  size_t end = name.find_last_of("0123456789");
  if (end == std::string::npos) return std::nullopt;
  size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  return name.substr(start, end - start + 1);
}

std::string DefaultDiagDirBeside(const std::string& stdout_path, const std::string& job_id) {
  // kDefaultDiagDirPattern: "%o/jobmon-diag-%j", %o the stdout's directory.
  return (fs::path(stdout_path).parent_path() / ("jobmon-diag-" + job_id)).string();
}

Expected<ResolvedTarget> ResolveTarget(const std::string& argument) {
  if (argument.empty())
    return Error{"nothing to diagnose: give a job id, log, diag dir, archive or TSDB"};
  std::error_code ec;
  auto status = fs::status(argument, ec);
  if (AllDigits(argument) && !fs::exists(status)) return ResolveJobId(argument);
  if (!fs::exists(status)) return Error{argument + ": no such file or directory (nor a job id)"};
  if (fs::is_directory(status)) return ResolveDirectory(argument);
  if (!fs::is_regular_file(status)) return Error{argument + ": not a regular file or directory"};
  if (argument.ends_with(".tar.zst")) return ResolveArchive(argument);
  return ResolveLog(argument);
}

}  // namespace jobmon::diagnose
