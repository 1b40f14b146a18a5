#pragma once
// The diag dir's layout: one contract for the plugin (which makes it), the
// daemon and `jobmon status` (which read it). Everything in it is the job's
// user's to change, so readers open it with OpenUserFile (user_file.h).
//
//   <diag dir>/manifest.json        the job's diagnostics (manifest.h)
//             /targets/<node>.json  one Prometheus file_sd file per node
//             /prometheus.yml       the per-job Prometheus's configuration
//             /prometheus/          its TSDB
//             /logs/                the plugin's daemons' logs and notes
//             /tsdb.tar.zst         the TSDB archived at the job's end
//             /tsdb.run<N>.tar.zst  an earlier run's archive, N from 0, when
//                                   the job was requeued (docs/recovery.md)
//             /ray-logs/[<node>/]   Ray's session logs, where the job copies
//                                   them (`jobmon triage` reads them; docs/ray.md)

#include <string>
#include <string_view>

namespace jobmon {

// Slurm's filename patterns plus %o (the directory of the job's stdout): the
// plugin's `diag_dir` default, and the daemon's guess for the same job.
inline constexpr std::string_view kDefaultDiagDirPattern = "%o/jobmon-diag-%j";

inline constexpr std::string_view kManifestFileName = "manifest.json";
inline constexpr std::string_view kTargetsDirName = "targets";
inline constexpr std::string_view kTargetFileSuffix = ".json";  // targets/<node>.json
inline constexpr std::string_view kPrometheusConfigFileName = "prometheus.yml";
inline constexpr std::string_view kTsdbDirName = "prometheus";
inline constexpr std::string_view kLogsDirName = "logs";
inline constexpr std::string_view kArchiveFileName = "tsdb.tar.zst";
inline constexpr std::string_view kRayLogsDirName = "ray-logs";

struct DiagLayout {
  std::string dir;  // absolute
  std::string manifest() const { return In(kManifestFileName); }
  std::string targets_dir() const { return In(kTargetsDirName); }
  std::string target_file(const std::string& node) const {
    return targets_dir() + "/" + node + std::string(kTargetFileSuffix);
  }
  std::string prometheus_config() const { return In(kPrometheusConfigFileName); }
  std::string tsdb_dir() const { return In(kTsdbDirName); }
  std::string logs_dir() const { return In(kLogsDirName); }
  std::string archive() const { return In(kArchiveFileName); }
  // Where run `run` (0: the first) keeps its archive once a later run archives.
  std::string earlier_run_archive(unsigned run) const {
    return In("tsdb.run" + std::to_string(run) + ".tar.zst");
  }
  std::string ray_logs_dir() const { return In(kRayLogsDirName); }

 private:
  std::string In(std::string_view name) const { return dir + "/" + std::string(name); }
};

}  // namespace jobmon
