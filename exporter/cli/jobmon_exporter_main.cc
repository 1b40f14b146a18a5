// jobmon-exporter: per-node metrics for one job, on the node's
// cluster-private address only.

#include <prometheus/collectable.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "jobmon/common/duration.h"
#include "jobmon/common/job_history.h"
#include "jobmon/common/metrics_server.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/common/ray_targets.h"
#include "jobmon/exporter/collector_pool.h"
#include "jobmon/exporter/gpu_selection.h"
#include "jobmon/exporter/history_proxy.h"
#include "jobmon/exporter/kmsg_source.h"
#include "jobmon/exporter/listen_address.h"
#include "jobmon/exporter/ray_discovery.h"

namespace ex = jobmon::exporter;

namespace {

// Series fixed at start (how the kernel log is read), with the host label
// the pool gives its collectors' series.
class StartupFamilies : public prometheus::Collectable {
 public:
  StartupFamilies(ex::Families families, const std::string& host) : families_(std::move(families)) {
    for (auto& family : families_) {
      for (auto& metric : family.metric) metric.label.push_back({"host", host});
    }
  }
  std::vector<prometheus::MetricFamily> Collect() const override { return families_; }

 private:
  ex::Families families_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string listen, host, collectors_list, interval_text = "1s";
  std::vector<std::string> allow;
  ex::SourcePaths paths;
  double deadline_seconds = 2.0, abandon_after_seconds = 10.0;
  CLI::App app{"jobmon-exporter: per-node hardware and training metrics for a job's Prometheus",
               "jobmon-exporter"};
  app.set_version_flag("--version", "jobmon-exporter " JOBMON_VERSION);
  app.add_option("--listen", listen,
                 "ADDR:PORT to serve /metrics on (a literal IP; never 0.0.0.0 or ::); required");
  app.add_option("--allow", allow,
                 "Only these IPv4 blocks may connect (CIDR, repeatable; the plugin passes its "
                 "scrapers); none: anyone who reaches --listen");
  app.add_option("--host", host, "Value of the `host` label on every series; required");
  app.add_option("--procfs", paths.procfs, "procfs root (fixture trees in tests)")
      ->capture_default_str();
  app.add_option("--sysfs", paths.sysfs, "sysfs root")->capture_default_str();
  app.add_option("--dev", paths.dev, "dev root")->capture_default_str();
  app.add_option("--tfevents", paths.tfevents,
                 "TensorBoard dir: export tb_* from the newest event file created after start");
  app.add_option("--nvml-library", paths.nvml_library,
                 "NVML library for gpu_nvml (a soname searched like dlopen, or a path)")
      ->capture_default_str();
  std::string gpus_text, gpus_source = "all";
  app.add_option("--gpus", gpus_text,
                 "Serve only these GPUs (comma-separated node indices: the job's own on a "
                 "shared node; default: every GPU)");
  app.add_option("--gpus-source", gpus_source,
                 "Where --gpus came from (slurm, cgroup; all without --gpus), the source label "
                 "of hw_gpu_served")
      ->capture_default_str();
  app.add_option("--job-id", paths.job_id,
                 "Slurm job id: its processes (by cgroup job_<id>) for job_processes and "
                 "gpu_nvml's GPUs where they run");
  app.add_option("--scontrol", paths.scontrol,
                 "scontrol for job_processes' `scontrol listpids JOB NODE` (the job's processes "
                 "where no cgroup names the job, and its tasks' pids)")
      ->capture_default_str();
  app.add_option("--slurm-node", paths.slurm_node,
                 "This node's slurmd NodeName, for scontrol listpids (the prolog passes "
                 "SLURMD_NODENAME; default: scontrol guesses from the hostname)");
  app.add_option("--slurm-conf", paths.slurm_conf,
                 "slurm.conf for scontrol (default: $SLURM_CONF when set, else Slurm's own)");
  std::string prometheus_text;
  app.add_option("--prometheus", prometheus_text,
                 "The job's Prometheus on this node's loopback (127.0.0.1:PORT; the head node's "
                 "prolog passes it): GET " +
                     std::string(jobmon::job_history::kPath) +
                     " answers a selector of metric families from it, for a monitor restarted "
                     "while the job ran");
  std::string ray_discovery;
  std::optional<uint32_t> ray_owner;
  app.add_option(
      "--ray-discovery", ray_discovery,
      "Ray's Prometheus service-discovery file (the head node's prolog passes it): GET " +
          std::string(jobmon::ray_targets::kPath) +
          " answers its targets in the cluster's private ranges as http_sd JSON, for "
          "the job's Prometheus to scrape Ray's own metrics");
  app.add_option("--ray-owner", ray_owner,
                 "uid that must own --ray-discovery (the job's user); required with it");
  std::string ray_hosts;
  app.add_option("--ray-hosts", ray_hosts,
                 "the job's diag dir: its targets/<node>.json name each node's address, and "
                 "Ray's targets are labelled host=<node> as the exporters' are (else the IP)");
  std::optional<int> kmsg_fd;
  app.add_option("--kmsg-fd", kmsg_fd,
                 "Read the kernel log from this inherited descriptor (the root prolog's "
                 "/dev/kmsg under kernel.dmesg_restrict=1) instead of opening DEV/kmsg");
  app.add_option("--collectors", collectors_list,
                 "Comma-separated collectors to run (default: all; see --list-collectors)");
  bool list_collectors = false;
  app.add_flag("--list-collectors", list_collectors, "Print the collectors and exit");
  app.add_option("--interval", interval_text,
                 "Collect at most this often; scrapes in between share the last collection "
                 "(0 collects on every scrape)")
      ->capture_default_str();
  app.add_option("--deadline", deadline_seconds, "Seconds a scrape waits for a collector")
      ->capture_default_str();
  app.add_option("--abandon-after", abandon_after_seconds,
                 "Seconds after which a stuck collector thread is abandoned and replaced")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (paths.slurm_conf.empty()) {
    if (const char* conf = std::getenv("SLURM_CONF")) paths.slurm_conf = conf;
  }
  auto gpus = ex::ParseGpuSelection(gpus_text, gpus_source);
  if (!gpus) {
    std::cerr << "jobmon-exporter: error: " << gpus.error().message << "\n";
    return 2;
  }
  paths.gpus = *gpus;
  if (list_collectors) {
    auto all = ex::BuiltinCollectors(paths);
    for (auto& factory : all) {
      auto why_off = factory.why_off ? factory.why_off() : std::nullopt;
      std::cout << factory.name << (why_off ? "\toff: " + *why_off : "\ton") << "\n";
    }
    return 0;
  }
  if (listen.empty() || host.empty()) {
    std::cerr << "jobmon-exporter: error: --listen and --host are required (see --help)\n";
    return 2;
  }
  auto interval = jobmon::ParseDuration(interval_text);
  if (!interval) {
    std::cerr << "jobmon-exporter: error: --interval: " << interval.error().message << "\n";
    return 2;
  }
  auto address = ex::ParseListenAddress(listen);
  if (!address) {
    std::cerr << "jobmon-exporter: error: " << address.error().message << "\n";
    return 2;
  }
  jobmon::MetricsServerLimits limits;
  for (const std::string& text : allow) {
    auto cidr = jobmon::Cidr::Parse(text);
    if (!cidr) {
      std::cerr << "jobmon-exporter: error: --allow " << text << ": " << cidr.error().message
                << "\n";
      return 2;
    }
    limits.allowed.push_back(*cidr);
  }
  std::optional<ex::HistoryProxy> history;
  if (!prometheus_text.empty()) {
    auto prometheus = jobmon::ParseSocketAddress(prometheus_text);
    auto made = prometheus ? ex::HistoryProxy::Make(*prometheus)
                           : jobmon::Expected<ex::HistoryProxy>(prometheus.error());
    if (!made) {
      std::cerr << "jobmon-exporter: error: --prometheus: " << made.error().message << "\n";
      return 2;
    }
    history.emplace(std::move(made).value());
  }
  std::optional<ex::RayDiscovery> ray;
  if (!ray_discovery.empty()) {
    if (!ray_owner) {
      std::cerr << "jobmon-exporter: error: --ray-discovery needs --ray-owner\n";
      return 2;
    }
    ray.emplace(ray_discovery, static_cast<uid_t>(*ray_owner), jobmon::Rfc1918Cidrs(), ray_hosts);
  }
  bool dmesg_on =
      collectors_list.empty() || ("," + collectors_list + ",").find(",dmesg,") != std::string::npos;
  std::shared_ptr<ex::KmsgSource> kmsg;
  if (dmesg_on) {
    std::vector<std::string> notes;
    kmsg = std::make_shared<ex::KmsgSource>(ex::OpenKmsgSource(kmsg_fd, paths.dev, &notes));
    for (const std::string& note : notes) std::cerr << "jobmon-exporter: dmesg: " << note << "\n";
    std::cerr << "jobmon-exporter: dmesg: "
              << (kmsg->kind == ex::KmsgSource::Kind::kNone
                      ? "cannot read the kernel log; GPU error detection is off"
                      : "reads the kernel log from " + kmsg->where)
              << "\n";
    // The descriptor reads what dmesg_restrict hides from this user: another
    // process of the same user must not take it (ptrace, pidfd_getfd,
    // /proc/PID/fd need a dumpable target).
    if (kmsg->kind == ex::KmsgSource::Kind::kInheritedFd) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    paths.kmsg = kmsg;
  } else if (kmsg_fd && *kmsg_fd > 2) {
    close(*kmsg_fd);  // not used: not kept either
  }
  auto selected = ex::SelectCollectors(ex::BuiltinCollectors(paths), collectors_list);
  if (!selected) {
    std::cerr << "jobmon-exporter: error: --collectors: " << selected.error().message << "\n";
    return 2;
  }
  std::vector<ex::CollectorFactory> collectors = std::move(selected).value();
  // Said once at start (a node without a GPU driver is normal, not an error
  // to repeat on every scrape).
  for (const std::string& line : ex::DropUnavailable(collectors)) {
    std::cerr << "jobmon-exporter: " << line << "\n";
  }
  // Signals are handled by sigwait in this thread; every thread created
  // from here on inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ex::PoolOptions options;
  options.host = host;
  options.deadline = std::chrono::milliseconds(static_cast<int64_t>(deadline_seconds * 1000));
  options.abandon_after =
      std::chrono::milliseconds(static_cast<int64_t>(abandon_after_seconds * 1000));
  options.min_interval = *interval;
  auto pool = std::make_shared<ex::CollectorPool>(collectors, options);
  // Bounded per peer, idle connections closed (MetricsServerLimits): a
  // peer's idle or half-sent connections cannot starve the job's Prometheus
  // or the monitor.
  auto server = jobmon::MetricsServer::Start(*address, limits);
  if (!server) {
    std::cerr << "jobmon-exporter: error: cannot listen on " << address->ToBindString() << ": "
              << server.error().message << "\n";
    return 1;
  }
  server.value()->RegisterCollectable(pool);
  // The server holds collectables weakly: this one lives as long as main.
  std::shared_ptr<StartupFamilies> startup;
  if (kmsg) {
    startup = std::make_shared<StartupFamilies>(ex::KmsgSourceFamilies(*kmsg), host);
    server.value()->RegisterCollectable(startup);
  }
  if (history) history->ServeOn(*server.value());
  if (ray) ray->ServeOn(*server.value());
  std::string names;
  for (const auto& f : collectors) names += (names.empty() ? "" : ",") + f.name;
  std::cerr << "jobmon-exporter: serving http://" << address->ToBindString() << "/metrics for host "
            << host << " (collectors: " << names << "; GPUs: "
            << (paths.gpus.only ? "the job's " + gpus_text + " from " + gpus_source : "all") << ")"
            << (history ? "; the job's history at " + prometheus_text : std::string())
            << (ray ? "; Ray's targets from " + ray_discovery : std::string()) << "\n";
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "jobmon-exporter: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", stopping\n";
  // No teardown: a collection in progress would be waited for (up to
  // --deadline), which delays the job's end on every node, and the exporter
  // holds nothing that needs flushing (no files, no state).
  std::cerr.flush();
  std::_Exit(0);
}
