#include "config_check.h"

#include <grp.h>
#include <pwd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "jobmon/alerts/secrets.h"
#include "jobmon/monitor/job_source.h"
#include "plugstack_file.h"

namespace jobmon::cli {
namespace {

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::optional<AccountIds> LookUpAccount(const std::string& name) {
  passwd* pw = getpwnam(name.c_str());
  if (!pw) return std::nullopt;
  AccountIds ids{name, pw->pw_uid, {}};
  int count = 64;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  if (getgrouplist(name.c_str(), pw->pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count));
    getgrouplist(name.c_str(), pw->pw_gid, groups.data(), &count);
  }
  groups.resize(static_cast<size_t>(std::max(count, 0)));
  ids.gids = groups.empty() ? std::vector<gid_t>{pw->pw_gid} : groups;
  return ids;
}

bool WritableBy(const struct stat& st, const AccountIds& ids) {
  if (ids.uid == 0) return true;
  if (st.st_uid == ids.uid) return (st.st_mode & S_IWUSR) != 0;
  for (gid_t gid : ids.gids) {
    if (gid == st.st_gid) return (st.st_mode & S_IWGRP) != 0;
  }
  return (st.st_mode & S_IWOTH) != 0;
}

std::string ProgramProblem(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if ((st.st_mode & S_IXOTH) == 0) {
    return "not executable by other users (mode " + Mode(st.st_mode) +
           "; the job's daemons run as the job's user)";
  }
  return "";
}

std::vector<std::string> CheckSecrets(const alerts::AlertsConfig& alerts,
                                      const std::string& config_path, const AccountIds& owner) {
  std::vector<std::string> problems;
  auto secrets = alerts::Secrets::Load(alerts.secrets_file, owner.uid);
  if (!secrets) {
    // The daemon would refuse to start with it: the names cannot be checked either.
    problems.push_back(secrets.error().message + " (the monitor runs as " + owner.name + ")");
    return problems;
  }
  for (const std::string& missing : alerts::MissingSecrets(alerts, *secrets)) {
    problems.push_back(config_path + ": " + missing);
  }
  return problems;
}

std::vector<std::string> CheckStateDb(const std::string& state_db, const AccountIds& owner) {
  std::vector<std::string> problems;
  namespace fs = std::filesystem;
  std::string dir = fs::path(state_db).parent_path().string();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    problems.push_back("monitor.state_db " + state_db + ": directory " + dir + ": " +
                       std::strerror(errno) + " (the monitor does not create it)");
    return problems;
  }
  if (!S_ISDIR(st.st_mode)) {
    problems.push_back("monitor.state_db " + state_db + ": " + dir + " is not a directory");
    return problems;
  }
  // SQLite's WAL and journal files go beside the database.
  if (!WritableBy(st, owner)) {
    problems.push_back("monitor.state_db " + state_db + ": directory " + dir +
                       " is not writable by " + owner.name + " (mode " + Mode(st.st_mode) + ")");
  }
  if (stat(state_db.c_str(), &st) == 0 && !WritableBy(st, owner)) {
    problems.push_back("monitor.state_db " + state_db + " is not writable by " + owner.name +
                       " (mode " + Mode(st.st_mode) + ")");
  }
  return problems;
}

std::vector<std::string> CheckPluginPaths(const lifecycle::PluginConfig& config,
                                          const std::string& where) {
  std::vector<std::string> problems;
  const std::pair<const char*, const std::string*> programs[] = {{"exporter", &config.exporter},
                                                                 {"supervisor", &config.supervisor},
                                                                 {"archiver", &config.archiver},
                                                                 {"prometheus", &config.prometheus},
                                                                 {"scontrol", &config.scontrol}};
  for (const auto& [key, path] : programs) {
    struct stat st {};
    std::string problem = stat(path->c_str(), &st) != 0 ? std::strerror(errno) : ProgramProblem(st);
    if (!problem.empty()) problems.push_back(where + ": " + key + "=" + *path + ": " + problem);
  }
  // The plugin creates run_dir (and its parents) at the first job; a
  // non-directory there stops every job's diagnostics.
  struct stat st {};
  if (stat(config.run_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    problems.push_back(where + ": run_dir=" + config.run_dir + ": not a directory");
  }
  return problems;
}

std::vector<std::string> CheckPlugstack(const std::string& plugstack_path,
                                        const std::vector<RunningSlurm>& running) {
  PlugstackScan scan = ScanPlugstack(plugstack_path);
  std::vector<std::string> problems = scan.problems;
  if (scan.diag_lines.empty() && scan.problems.empty()) {
    problems.push_back(plugstack_path +
                       ": no spank_diag.so line here or in its includes (sbatch --diag is "
                       "unavailable)");
  }
  for (const DiagPluginLine& found : scan.diag_lines) {
    const std::string where = found.file + ":" + std::to_string(found.entry.line);
    if (found.entry.path.front() == '/' && !std::filesystem::exists(found.entry.path)) {
      problems.push_back(where + ": " + found.entry.path + ": no such file");
    } else if (auto built = ReadPluginSlurmVersion(found.entry.path)) {
      for (std::string& p : SlurmUpgradeProblems(where, found.entry.path, *built, running))
        problems.push_back(std::move(p));
    }
    auto config = lifecycle::ParsePluginConfig(found.entry.args);
    if (!config) {
      // What the plugin itself would log in slurmd's log, job after job.
      problems.push_back(where + ": " + config.error().message);
      continue;
    }
    for (std::string& problem : CheckPluginPaths(*config, where)) {
      problems.push_back(std::move(problem));
    }
  }
  return problems;
}

std::vector<std::string> CheckSlurm(const monitor::MonitorConfig& config) {
  std::vector<std::string> problems;
  auto source = monitor::MakeSlurmJobSource(config.SlurmCommands());
  if (auto jobs = source->ListJobs(); !jobs) {
    problems.push_back("Slurm: " + jobs.error().message);
  }
  if (auto nodes = source->ListNodeAddresses(); !nodes) {
    problems.push_back("Slurm: " + nodes.error().message);
  }
  return problems;
}

}  // namespace jobmon::cli
