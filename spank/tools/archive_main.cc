// jobmon-archive: packs a finished job's TSDB as tsdb.tar.zst and records
// the result in its manifest. Started detached by spank_diag's epilog on the
// head node, as the job's user, once Prometheus has exited.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "archive/tsdb_archive.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/manifest.h"
#include "jobmon/common/run_command.h"
#include "jobmon/common/text_lines.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/local_tsdb.h"

int main(int argc, char** argv) {
  std::string dir;
  int level = 3;
  bool keep_tsdb = false;
  std::string prometheus;
  std::string tsdb_dir;
  CLI::App app{"jobmon-archive: pack a job's TSDB as tsdb.tar.zst and update manifest.json",
               "jobmon-archive"};
  app.set_version_flag("--version", "jobmon-archive " JOBMON_VERSION);
  app.add_option("--diag-dir", dir, "The job's diag dir")->required();
  app.add_option("--level", level, "zstd compression level")
      ->check(CLI::Range(1, 19))
      ->capture_default_str();
  app.add_flag("--keep-tsdb", keep_tsdb, "Keep prometheus/ after a verified archive");
  app.add_option("--prometheus", prometheus,
                 "The Prometheus binary that wrote the TSDB (its version goes in the manifest)");
  app.add_option("--tsdb-dir", tsdb_dir,
                 "The live TSDB (default: prometheus/ in the diag dir); removed once archived");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  jobmon::DiagLayout layout{dir};
  if (tsdb_dir.empty()) tsdb_dir = layout.tsdb_dir();
  auto manifest = jobmon::ReadManifest(layout.manifest());
  if (!manifest) {
    std::cerr << "jobmon-archive: error: " << manifest.error().message << "\n";
    return 1;
  }
  // A requeued job's earlier run archived here already: keep it.
  auto kept_earlier = jobmon::archive::KeepEarlierArchive(
      layout.archive(), [&](unsigned run) { return layout.earlier_run_archive(run); });
  if (!kept_earlier) {
    std::cerr << "jobmon-archive: warning: " << kept_earlier.error().message << "\n";
  } else if (!kept_earlier->empty()) {
    std::cerr << "jobmon-archive: the earlier run's archive is kept as " << *kept_earlier << "\n";
  }
  std::cerr << "jobmon-archive: packing " << tsdb_dir << " into " << layout.archive()
            << " (zstd level " << level << ")\n";
  uint64_t reported = 0;
  auto result = jobmon::archive::ArchiveDirectory(
      tsdb_dir, "prometheus", layout.archive(), level, [&](uint64_t files, uint64_t bytes) {
        if (bytes - reported >= (64u << 20)) {
          std::cerr << "jobmon-archive: " << files << " files, " << (bytes >> 20) << " MiB\n";
          reported = bytes;
        }
      });
  manifest = jobmon::ReadManifest(layout.manifest());  // the epilog may have written since
  if (!manifest) {
    std::cerr << "jobmon-archive: error: " << manifest.error().message << "\n";
    return 1;
  }
  jobmon::Manifest m = *manifest;
  if (!prometheus.empty() && m.prometheus_version.empty()) {
    // "prometheus, version 2.42.0+ds (branch: ...)": the prolog leaves this
    // to us, since it must not wait for a subprocess. Printed on stderr or
    // stdout depending on the version.
    auto version = jobmon::RunCommand({"/bin/sh", "-c", "exec \"$0\" --version 2>&1", prometheus},
                                      std::chrono::seconds(5), 4096);
    if (version && version->exit_code == 0) {
      std::string first(jobmon::FirstLine(version->output));
      auto at = first.find("version ");
      if (at != std::string::npos) {
        first = first.substr(at + 8);
        m.prometheus_version = first.substr(0, first.find(' '));
      }
    }
  }
  m.ended_at = m.ended_at.empty() ? jobmon::IsoNow() : m.ended_at;
  if (!result) {
    m.state = "archive_failed";
    m.archive_error = result.error().message;
    std::cerr << "jobmon-archive: error: " << result.error().message << "\n";
  } else {
    // Never following a symlink the user's Prometheus dir may hold. The
    // directory itself may stay (a root-owned parent): the epilog removes it.
    bool kept = keep_tsdb;
    if (!keep_tsdb) {
      if (auto removed = jobmon::lifecycle::RemoveTreeNoFollow(tsdb_dir); !removed) {
        std::cerr << "jobmon-archive: warning: " << removed.error().message << "\n";
        kept = true;
      }
    }
    m.state = "archived";
    m.archive = jobmon::ArchiveInfo{layout.archive(), result->sha256, result->bytes, level, kept};
    std::cerr << "jobmon-archive: " << result->files << " files, " << result->input_bytes
              << " bytes -> " << result->bytes << " bytes, sha256 " << result->sha256 << "\n";
  }
  if (auto written = jobmon::WriteManifest(layout.manifest(), m); !written) {
    std::cerr << "jobmon-archive: error: " << written.error().message << "\n";
    return 1;
  }
  return result ? 0 : 1;
}
