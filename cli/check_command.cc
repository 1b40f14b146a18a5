#include "check_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "config_check.h"
#include "jobmon/monitor/jobmon_config.h"
#include "plugstack_file.h"

namespace jobmon::cli {
namespace {

struct CheckArgs {
  std::string config_path;
  std::string plugstack;
  std::string monitor_user;
  bool no_slurm = false;
};

int RunCheck(const CheckArgs& args) {
  // The daemon's user: named, else root, as the shipped unit runs it (it
  // opens each job's files as that job's user; Group=jobmon).
  const std::string user_name = args.monitor_user.empty() ? "root" : args.monitor_user;
  auto user = LookUpAccount(user_name);
  if (!user) return Fail("check", "--monitor-user " + user_name + ": no such user");
  const std::string plugstack =
      args.plugstack.empty() ? DefaultPlugstackPath(std::getenv("SLURM_CONF")) : args.plugstack;

  std::vector<std::string> problems;
  auto add = [&problems](std::vector<std::string> more) {
    for (std::string& p : more) problems.push_back(std::move(p));
  };
  const ConfigPath where = ResolveConfigPath(args.config_path);
  auto config = monitor::LoadJobmonConfig(where);
  std::string config_note = where.path;
  if (!config) {
    problems.push_back(config.error().message);
    config_note += ": unreadable, so secrets, state_db and Slurm were not checked";
  } else {
    if (config->path.empty()) config_note += " (absent: built-in defaults)";
    add(CheckSecrets(config->alerts, where.path, *user));
    add(CheckStateDb(config->monitor.state_db, *user));
    if (!args.no_slurm) add(CheckSlurm(config->monitor));
  }
  add(CheckPlugstack(plugstack, args.no_slurm ? std::vector<RunningSlurm>{} : AskRunningSlurm()));

  for (const std::string& problem : problems) std::cout << "jobmon check: " << problem << "\n";
  std::cout << "jobmon check: "
            << (problems.empty() ? std::string("no problems")
                                 : std::to_string(problems.size()) +
                                       (problems.size() == 1 ? " problem" : " problems"))
            << " (config " << config_note << "; plugstack " << plugstack << "; monitor user "
            << user->name << (args.no_slurm ? "; Slurm not asked" : "") << ")\n";
  return problems.empty() ? kOk : kFailed;
}

}  // namespace

std::function<int()> AddCheckCommand(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Validate the installation: jobmon.toml, the secrets file (mode, owner, every secret a "
      "receiver names), the spank_diag.so plugstack.conf line (the plugin's own argument "
      "parser), the programs and directories it names and the Slurm series it was built for "
      "against the running sbatch/slurmd, monitor.state_db's directory, and Slurm's job and "
      "node lists as the monitor asks for them. One line per problem; exit "
      "0 when there is none, 1 when there is any, 2 on usage errors. Run it as root on a node "
      "(the plugin's paths are the nodes').");
  cmd->add_option("-c,--config", args->config_path, kConfigOptionHelp);
  cmd->add_option("--plugstack", args->plugstack,
                  "plugstack.conf to read, with its includes (default: plugstack.conf beside "
                  "slurm.conf: $SLURM_CONF's directory, else /etc/slurm)");
  cmd->add_option("--monitor-user", args->monitor_user,
                  "The user slurm_job_monitor runs as: owns the secrets file, writes state_db "
                  "(default: root, as contrib/systemd/slurm_job_monitor.service runs it)");
  cmd->add_flag("--no-slurm", args->no_slurm,
                "Do not run Slurm's commands (squeue, scontrol, sinfo, sbatch, slurmd)");
  return Runner(cmd, args, RunCheck);
}

}  // namespace jobmon::cli
