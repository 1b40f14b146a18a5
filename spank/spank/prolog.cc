// job_prolog: start the job's exporters (every node) and Prometheus (the
// first node), publish where they are, and return at once: nothing here
// waits for a daemon to be ready.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jobmon/common/atomic_file.h"
#include "jobmon/common/daemon.h"
#include "jobmon/common/fs_identity.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/manifest.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/common/ray_targets.h"
#include "jobmon/common/target_file.h"
#include "jobmon/common/tunnel.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/gpu_allocation.h"
#include "lifecycle/job_env.h"
#include "lifecycle/kmsg_handoff.h"
#include "lifecycle/local_tsdb.h"
#include "lifecycle/plugin_config.h"
#include "lifecycle/port_reservation.h"
#include "lifecycle/prometheus_config.h"
#include "lifecycle/remote_write.h"
#include "lifecycle/rule_file.h"
#include "spank/diag_option.h"
#include "spank/job_script.h"
#include "spank/node_files.h"

namespace jobmon::spank {
namespace lc = jobmon::lifecycle;

namespace {

struct Prolog {
  const lc::PluginConfig& config;
  const lc::JobEnv& job;
  DiagLayout layout;
  lc::RunDir run;
  gid_t job_gid;
  OnHang on_hang = OnHang::kNotify;
  std::vector<std::string> degraded;

  void Degrade(const std::string& what) {
    degraded.push_back(what);
    slurm_error("[diag] job %u node %s: %s", job.job_id, job.node.c_str(), what.c_str());
  }

  // The exporter runs as the service user when one is configured.
  std::pair<uid_t, gid_t> ExporterUser() {
    if (!config.service_user.empty()) {
      if (passwd* pw = getpwnam(config.service_user.c_str())) return {pw->pw_uid, pw->pw_gid};
      Degrade("service_user '" + config.service_user + "' does not exist; exporter runs as " +
              job.user);
    }
    return {job.uid, job_gid};
  }

  // The job's GPUs on this node, for the exporter to serve only those. Never
  // a reason to stop: without an allocation the exporter serves every GPU.
  std::vector<std::string> JobGpus() {
    // cgroup v1 only: v2's device controller is a BPF program with no
    // readable list. The job's cgroup may not exist yet at prolog time;
    // Slurm's own allocation comes first anyway.
    std::optional<std::string> devices_list;
    if (std::ifstream in(lc::JobDevicesListPath("/sys/fs/cgroup", job.uid, job.job_id)); in) {
      std::string text(64 << 10, '\0');
      in.read(text.data(), static_cast<std::streamsize>(text.size()));
      text.resize(static_cast<size_t>(in.gcount()));
      devices_list = std::move(text);
    }
    auto allocation = lc::DecideGpuAllocation([](const char* name) { return std::getenv(name); },
                                              devices_list, lc::ListGpuDeviceNodes("/dev"));
    for (const std::string& note : allocation.notes) {
      slurm_info("[diag] job %u node %s: GPUs: %s", job.job_id, job.node.c_str(), note.c_str());
    }
    return lc::ExporterGpuArgs(allocation);
  }

  // This node's exporter address (a cluster-private IP, a reserved port),
  // chosen once: the head's prometheus.yml names it for Ray's targets
  // before the exporter starts. nullopt (and degraded): no exporter.
  struct ExporterAddress {
    IpAddress ip;
    std::string host_port;
  };
  const std::optional<ExporterAddress>& ChooseExporterAddress() {
    if (exporter_address_chosen_) return exporter_address_;
    exporter_address_chosen_ = true;
    auto interfaces = ListInterfaceAddresses();
    if (!interfaces) {
      Degrade("no exporter: cannot list addresses: " + interfaces.error().message);
      return exporter_address_;
    }
    PrivateIpPolicy policy = PrivateIpPolicy::Defaults();
    policy.cluster_cidrs = config.private_cidrs;
    auto choice = SelectPrivateAddress(*interfaces, policy);
    if (!choice) {
      Degrade("no exporter: " + choice.error().message);
      return exporter_address_;
    }
    const IpAddress& address = choice->chosen.address;
    auto port = lc::ReservePort(run, "exporter", address, config.exporter_port, config.port_tries);
    if (!port) {
      Degrade("no exporter: " + port.error().message);
      return exporter_address_;
    }
    exporter_address_ = ExporterAddress{
        address, (address.family == IpAddress::Family::kV6 ? "[" + address.ToString() + "]"
                                                           : address.ToString()) +
                     ":" + std::to_string(*port)};
    return exporter_address_;
  }
  std::optional<ExporterAddress> exporter_address_ = {};
  bool exporter_address_chosen_ = false;

  // `prometheus_port`: the job's Prometheus on this node (the head's), 0: none.
  void StartExporter(int prometheus_port) {
    const std::optional<ExporterAddress>& chosen = ChooseExporterAddress();
    if (!chosen) return;
    const IpAddress& address = chosen->ip;
    const std::string& host_port = chosen->host_port;
    auto tfevents = lc::ExpandNodePattern(config.tfevents_dir, layout, job);
    std::vector<std::string> argv = {config.supervisor,
                                     "--max-restarts",
                                     std::to_string(config.exporter_restarts),
                                     "--status-file",
                                     run.exporter_status(),
                                     "--",
                                     config.exporter,
                                     "--listen",
                                     host_port,
                                     "--host",
                                     job.node,
                                     "--job-id",
                                     std::to_string(job.job_id),
                                     "--scontrol",
                                     config.scontrol,
                                     "--slurm-node",
                                     job.node};
    // The slurm.conf slurmd reads: the exporter's environment has nothing of
    // slurmd's (DaemonEnvironment), and its scontrol needs it.
    if (!job.slurm_conf.empty()) argv.insert(argv.end(), {"--slurm-conf", job.slurm_conf});
    auto gpus = JobGpus();
    argv.insert(argv.end(), gpus.begin(), gpus.end());
    if (prometheus_port != 0) {
      argv.insert(argv.end(), {"--prometheus", "127.0.0.1:" + std::to_string(prometheus_port)});
      // The head's exporter hands the job's Prometheus Ray's targets (ray_targets.h).
      auto ray = lc::ExpandNodePattern(config.ray_discovery, layout, job);
      if (!config.ray_discovery.empty() && ray)
        argv.insert(argv.end(), {"--ray-discovery", *ray, "--ray-owner", std::to_string(job.uid),
                                 "--ray-hosts", layout.dir});
    }
    auto allow = lc::ExporterAllowArgs(config, address);
    argv.insert(argv.end(), allow.begin(), allow.end());
    if (tfevents) {
      argv.insert(argv.end(), {"--tfevents", *tfevents});
    } else {
      Degrade("tfevents_dir: " + tfevents.error().message);
    }
    for (const std::string& arg : config.exporter_args) {
      auto expanded = lc::ExpandNodePattern(arg, layout, job);
      if (!expanded) {
        Degrade("exporter_arg: " + expanded.error().message);
        continue;
      }
      argv.push_back(*expanded);
    }
    for (const std::string* program : {&config.supervisor, &config.exporter}) {
      if (access(program->c_str(), X_OK) != 0) {
        Degrade("no exporter: " + *program + " is not an executable");
        return;
      }
    }
    auto [uid, gid] = ExporterUser();
    // Opened here as root: the exporter's user may not (dmesg_restrict).
    lc::KmsgHandoff kmsg = lc::OpenKmsgForExporter();
    if (!kmsg.note.empty()) Degrade(kmsg.note);
    if (kmsg.fd.valid()) {
      if (auto why = lc::WhyNotHandOverKmsg({config.supervisor, config.exporter}, uid, gid)) {
        Degrade(*why);
        kmsg.fd.reset();
      }
    }
    if (kmsg.fd.valid()) {
      // Right after the program: exporter_arg flags come later and may not
      // repeat it by accident.
      auto at = std::find(argv.begin(), argv.end(), config.exporter);
      argv.insert(at + 1, {"--kmsg-fd", std::to_string(kmsg.fd.get())});
    }
    // The supervisor reports through a directory of its own: as the job's or
    // the service user it cannot write the root-owned run dir.
    if (auto made = MakeDirectoryFor(run.supervisor_dir(), uid, gid); !made) {
      Degrade("exporter status not recorded: " + made.error().message);
    }
    // The log is in the job's diag dir: opened here as the job's user (the
    // service user could not create it there, and must not be made to
    // append to a file a symlink there points at).
    auto log = OpenDaemonLog(layout.logs_dir() + "/exporter-" + job.node + ".log",
                             JobUser{job.uid, job_gid});
    if (!log) Degrade("exporter log: " + log.error().message + "; its output is discarded");
    DaemonSpec spec{argv, DaemonEnvironment(), "", layout.dir, uid, gid, log ? log->get() : -1};
    spec.inherit_fd = kmsg.fd.get();
    auto started = SpawnDaemon(spec);
    if (!started) {
      Degrade("no exporter: " + started.error().message);
      return;
    }
    (void)WriteFileAtomically(run.exporter_pid(), FormatPidRecord(*started));
    Expected<void> target = [&] {
      FsIdentity as_user(job.uid, job_gid);
      return WriteFileAtomically(layout.target_file(job.node),
                                 RenderTargetFile(host_port, job.node));
    }();
    if (!target) {
      Degrade("exporter target not published: " + target.error().message);
    }
  }

  // The live TSDB: on this node's disk (tsdb_dir), or in the diag dir when
  // the operator chose that; "" when there is none (degraded).
  std::string MakeTsdbDir() {
    auto path = lc::TsdbDirFor(config, layout, job);
    if (!path) {
      Degrade("no Prometheus: " + path.error().message);
      return "";
    }
    if (lc::IsInside(*path, layout.dir)) {
      // The diag dir is the user's: made as them, as before tsdb_dir existed.
      FsIdentity as_user(job.uid, job_gid);
      if (auto made = MakeDirectory(*path, 0750); !made) {
        Degrade("no Prometheus: " + made.error().message);
        return "";
      }
      return *path;
    }
    // Jobs whose archiver outlived their epilog left their emptied dirs.
    const std::string parent = path->substr(0, path->rfind('/'));
    lc::SweepEmptyTsdbDirs(parent, [&](uint32_t id) {
      std::error_code ec;
      return id == job.job_id ||
             std::filesystem::exists(run.node_dir + "/" + std::to_string(id), ec);
    });
    auto local = lc::PrepareLocalTsdb(*path, job.uid, job_gid,
                                      static_cast<uint64_t>(config.tsdb_min_free_mb));
    if (!local) {
      // Never onto the shared filesystem instead (Prometheus does not
      // support it): an operator without local disk sets tsdb_dir=%d/prometheus.
      Degrade("no Prometheus: live TSDB: " + local.error().message);
      return "";
    }
    if (!local->moved_aside.empty()) {
      slurm_info("[diag] job %u: an earlier job's TSDB at %s was moved to %s", job.job_id,
                 path->c_str(), local->moved_aside.c_str());
    }
    (void)WriteFileAtomically(run.tsdb_dir(), *path + "\n");
    return *path;
  }

  // Head node only.
  void StartPrometheus(Manifest& manifest) {
    // %u: a credential per user, so the store can tie each user's writes
    // to that user's `user` label (README "Central store").
    auto with_user = lc::WithUserCredentials(config, job.user);
    lc::PluginConfig rendered = with_user ? std::move(with_user.value()) : config;
    if (!with_user && !config.remote_write.empty()) {
      Degrade("remote_write off: " + with_user.error().message);
      rendered.remote_write.clear();
    }
    if (!rendered.remote_write.empty()) {
      if (auto files = lc::CheckRemoteWriteFiles(rendered, job.uid, job_gid); !files) {
        Degrade("remote_write off: " + files.error().message);
        rendered.remote_write.clear();
      }
    }
    manifest.remote_write = rendered.remote_write;
    if (!config.rule_file.empty()) {
      // Prometheus would not start with an unreadable rules file.
      if (auto rules = lc::CheckRuleFile(config.rule_file, job.uid, job_gid); !rules) {
        Degrade("rule_file off: " + rules.error().message);
        rendered.rule_file.clear();
      }
    }
    // Ray's targets from this node's exporter, when it will have one (its
    // port reserved here, as root, before the user's identity below).
    std::string ray_sd;
    if (const auto& exporter = ChooseExporterAddress(); exporter && !config.ray_discovery.empty())
      ray_sd = "http://" + exporter->host_port + std::string(ray_targets::kPath);
    Expected<void> written = [&] {
      FsIdentity as_user(job.uid, job_gid);
      return WriteFileAtomically(layout.prometheus_config(),
                                 lc::RenderPrometheusConfig(rendered, job, layout, ray_sd));
    }();
    if (!written) {
      Degrade("no Prometheus: " + written.error().message);
      return;
    }
    if (access(config.prometheus.c_str(), X_OK) != 0) {
      Degrade("no Prometheus: " + config.prometheus +
              " is not an executable (apt-get install prometheus)");
      return;
    }
    auto loopback = IpAddress::Parse("127.0.0.1");
    auto port =
        lc::ReservePort(run, "prometheus", *loopback, config.prometheus_port, config.port_tries);
    if (!port) {
      Degrade("no Prometheus: " + port.error().message);
      return;
    }
    const std::string tsdb = MakeTsdbDir();
    if (tsdb.empty()) return;
    manifest.tsdb_dir = tsdb;
    std::vector<std::string> argv = {
        config.prometheus,
        "--config.file=" + layout.prometheus_config(),
        "--storage.tsdb.path=" + tsdb,
        "--web.listen-address=127.0.0.1:" + std::to_string(*port),
        // The job's data stays for the job's whole life; the archive keeps it after.
        "--storage.tsdb.retention.time=3650d",
    };
    // As the job's user, so the TSDB belongs to them; admin API and
    // lifecycle endpoints stay off (not enabled). Its log: as for the exporter.
    auto log = OpenDaemonLog(layout.logs_dir() + "/prometheus.log", JobUser{job.uid, job_gid});
    if (!log) Degrade("Prometheus log: " + log.error().message + "; its output is discarded");
    DaemonSpec spec{argv,    DaemonEnvironment(),  "", layout.dir, job.uid,
                    job_gid, log ? log->get() : -1};
    auto started = SpawnDaemon(spec);
    if (!started) {
      Degrade("no Prometheus: " + started.error().message);
      return;
    }
    (void)WriteFileAtomically(run.prometheus_pid(), FormatPidRecord(*started));
    manifest.prometheus_address = "127.0.0.1";
    manifest.prometheus_port = *port;
    manifest.tunnel_command = TunnelCommand(job.head_node(), *port);
  }

  void Run() {
    if (auto made = MakeDirectory(run.dir, 0755); !made) {
      slurm_error("[diag] job %u node %s: %s; diagnostics off for this job", job.job_id,
                  job.node.c_str(), made.error().message.c_str());
      return;
    }
    (void)WriteFileAtomically(run.diag_dir(), layout.dir + "\n");
    bool dir_ok = true;
    for (const std::string& dir : {layout.dir, layout.targets_dir(), layout.logs_dir()}) {
      // As the job's user: the diag dir is created only where they could
      // create it, and is theirs.
      FsIdentity as_user(job.uid, job_gid);
      if (auto made = MakeDirectory(dir, 0755); !made) {
        Degrade("diag dir unwritable: " + made.error().message + "; nothing started");
        dir_ok = false;
        break;
      }
    }
    Manifest manifest;
    if (dir_ok) {
      if (job.is_head()) {
        manifest.job_id = job.job_id;
        manifest.user = job.user;
        manifest.uid = job.uid;
        manifest.nodes = job.nodes;
        manifest.head_node = job.head_node();
        manifest.diag_dir = layout.dir;
        manifest.targets_dir = layout.targets_dir();
        manifest.job_log = StdoutPath(job);
        manifest.on_hang = std::string(ToString(on_hang));
        manifest.jobmon_version = JOBMON_VERSION;
        manifest.started_at = IsoNow();
        StartPrometheus(manifest);
      }
      // After the head's Prometheus: its exporter answers a restarted
      // monitor's question for the job's history from it (job_history.h).
      StartExporter(manifest.prometheus_port);
      if (job.is_head()) {
        manifest.state = "running";
        manifest.degraded = degraded;
        Expected<void> written = [&] {
          FsIdentity as_user(job.uid, job_gid);
          return WriteManifest(layout.manifest(), manifest);
        }();
        if (!written) {
          Degrade("manifest not written: " + written.error().message);
        }
      }
    }
    for (const std::string& line : degraded) {
      AppendLine(run.degraded(), line);
      if (dir_ok) {
        FsIdentity as_user(job.uid, job_gid);
        AppendLine(DegradedNotesPath(layout, job.node), line);
      }
    }
    if (degraded.empty()) {
      slurm_info(
          "[diag] job %u node %s: exporter started%s", job.job_id, job.node.c_str(),
          job.is_head()
              ? (", Prometheus on 127.0.0.1:" + std::to_string(manifest.prometheus_port)).c_str()
              : "");
    }
  }
};

}  // namespace

int JobProlog(spank_t sp, const std::vector<std::string>& args) {
  auto config = lc::ParsePluginConfig(args);
  if (!config) {
    slurm_error("[diag] %s; the plugin is disabled for this job", config.error().message.c_str());
    return 0;
  }
  auto requested = RequestedDiagMode(sp);
  bool on = requested ? *requested == DiagMode::kOn : config->default_on;
  if (!on) return 0;
  auto job = lc::ReadJobEnv([](const char* name) { return std::getenv(name); });
  if (!job) {
    slurm_error("[diag] job prolog: %s; diagnostics off for this job", job.error().message.c_str());
    return 0;
  }
  auto layout = lc::DiagLayoutFor(*config, *job);
  if (!layout) {
    slurm_error("[diag] job %u: %s; diagnostics off for this job", job->job_id,
                layout.error().message.c_str());
    return 0;
  }
  Prolog prolog{*config,
                *job,
                *layout,
                lc::RunDirFor(*config, job->node, job->job_id),
                JobGroup(*job),
                RequestedOnHang(sp),
                {}};
  prolog.Run();
  return 0;
}

}  // namespace jobmon::spank
