// ResolveTarget: what `jobmon diagnose <argument>` names, and where that
// job's TSDB is (tsdb_access.h).
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "access/tsdb_local.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/common/slurm_pattern.h"
#include "jobmon/common/text_lines.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/line_facts.h"

namespace jobmon::diagnose {

namespace fs = std::filesystem;

namespace {

// Whose a diag dir is: its owner (the plugin makes it as the job's user),
// never the manifest's "uid", which that user writes. nullopt: not a
// directory we can stat.
std::optional<uid_t> OwnerOf(const std::string& path) {
  struct stat st {};
  if (path.empty() || lstat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

// A regular file (or a directory) that is no link, owned by the diag
// dir's owner (`owner`): the paths the manifest names are read only then,
// never a file of someone else's they point at (root's above all).
bool OwnedPlain(const std::string& path, std::optional<uid_t> owner, bool directory) {
  struct stat st {};
  if (!owner || path.empty() || lstat(path.c_str(), &st) != 0) return false;
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return false;
  return st.st_uid == *owner;
}

// The job's log as the manifest names it: the job's user's own regular file.
bool IsJobsOwnLog(const std::string& path, std::optional<uid_t> owner) {
  struct stat st {};
  return owner && !path.empty() && lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         st.st_uid == *owner;
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
    // The manifest is the job user's: the paths it names are not trusted as
    // they are, nor the uid it states. The archive is the diag dir's own
    // (where the archiver, run as the job's user, writes it); a log or TSDB
    // directory is used only when it is no link and its owner is the diag
    // dir's.
    const std::optional<uid_t> owner = OwnerOf(dir);
    if (IsJobsOwnLog(manifest->job_log, owner)) out.log_path = manifest->job_log;
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
    if (IsJobsOwnLog(manifest->job_log, OwnerOf(out.diag_dir))) out.log_path = manifest->job_log;
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
  std::optional<uid_t> owner;
  // squeue's JSON, not `scontrol -o`: there a job name containing
  // " StdOut=/x" would choose the file read (slurm_jobs.h).
  if (auto job = triage::QuerySlurmJob(job_id)) {
    log = job->std_out;
    owner = job->uid;
  }
  std::vector<std::string> candidates;
  if (!log.empty()) {
    candidates.push_back(DefaultDiagDirBeside(log, job_id));
  } else {
    looked.push_back("squeue --json: job " + job_id + " not listed (ended long ago?) or no StdOut");
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
    // Slurm's StdOut, when it is the job's user's own file (not a link).
    if (IsJobsOwnLog(log, owner)) target.log_path = log;
    return target;
  }
  std::string message = "job " + job_id + ": no diag dir found";
  for (const auto& l : looked) message += "; " + l;
  return Error{message + " (pass the diag dir, the archive or the log instead)"};
}

}  // namespace

std::optional<std::string> JobIdOfLog(const std::string& log_path) {
  // The header's first 200 lines, from a bounded prefix: a log without a
  // newline costs kJobIdHeadBytes, not its size. Most headers lie in the
  // first 64 KiB, read first: `jobmon triage` asks this of every log, and a
  // megabyte's first touch is a few milliseconds (triage/src/chunk_buffers.h).
  constexpr int kHeaderLines = 200;
  for (const size_t bytes : {size_t{64} << 10, kJobIdHeadBytes}) {
    auto head = ReadFilePrefix(log_path, bytes);
    if (!head) break;
    std::string_view text = head->text;
    // A cut prefix's last line may be cut too: only whole lines are read
    // before the larger prefix.
    if (head->cut && bytes < kJobIdHeadBytes) text = text.substr(0, text.rfind('\n') + 1);
    int lines = 0;
    for (std::string_view line : TextLines(text)) {
      if (++lines > kHeaderLines) break;
      if (auto id = triage::ParseHeaderJobId(line.substr(0, 4096)); id && AllDigits(*id))
        return std::string(*id);
    }
    if (!head->cut || lines > kHeaderLines) break;  // the whole file, or the header, was read
  }
  const std::string name = fs::path(log_path).filename().string();
  size_t end = name.find_last_of("0123456789");
  if (end == std::string::npos) return std::nullopt;
  size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  return name.substr(start, end - start + 1);
}

std::string DefaultDiagDirBeside(const std::string& stdout_path, const std::string& job_id) {
  // The plugin's default pattern, its %o the stdout's directory (joined as a
  // path: a log named without a directory has its diag dir beside it too).
  auto rest =
      slurm_pattern::ExpandLetters(std::string(kDefaultDiagDirPattern), {{'o', ""}, {'j', job_id}});
  if (!rest) return "";
  const std::string name = rest->starts_with('/') ? rest->substr(1) : *rest;
  return (fs::path(stdout_path).parent_path() / name).string();
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

Expected<JobUser> TargetUser(const std::string& argument) {
  struct stat st {};
  if (lstat(argument.c_str(), &st) == 0) {
    struct passwd entry {};
    struct passwd* found = nullptr;
    std::vector<char> buffer(16384);
    // The owner's primary group where it has a passwd entry, else the file's.
    if (getpwuid_r(st.st_uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
      return JobUser{st.st_uid, found->pw_gid};
    return JobUser{st.st_uid, st.st_gid};
  }
  if (!AllDigits(argument)) return Error{argument + ": no such file or directory (nor a job id)"};
  auto job = triage::QuerySlurmJob(argument);
  if (!job)
    return Error{"job " + argument +
                 ": Slurm does not list it, so its user is not known and root reads nothing of "
                 "it as root; pass its diag dir, archive or log (read as their owner), or run "
                 "as the job's user"};
  return JobUser{job->uid, job->gid};
}

}  // namespace jobmon::diagnose
