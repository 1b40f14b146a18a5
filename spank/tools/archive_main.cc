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
#include "lifecycle/diag_paths.h"

int main(int argc, char** argv) {
  std::string dir;
  int level = 3;
  bool keep_tsdb = false;
  std::string prometheus;
  CLI::App app{"jobmon-archive: pack a job's TSDB as tsdb.tar.zst and update manifest.json"};
  app.add_option("--diag-dir", dir, "The job's diag dir")->required();
  app.add_option("--level", level, "zstd compression level")
      ->check(CLI::Range(1, 19))
      ->capture_default_str();
  app.add_flag("--keep-tsdb", keep_tsdb, "Keep prometheus/ after a verified archive");
  app.add_option("--prometheus", prometheus,
                 "The Prometheus binary that wrote the TSDB (its version goes in the manifest)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  jobmon::DiagLayout layout{dir};
  auto manifest = jobmon::ReadManifest(layout.manifest());
  if (!manifest) {
    std::cerr << "jobmon-archive: error: " << manifest.error().message << "\n";
    return 1;
  }
  std::cerr << "jobmon-archive: packing " << layout.tsdb_dir() << " into " << layout.archive()
            << " (zstd level " << level << ")\n";
  uint64_t reported = 0;
  auto result = jobmon::archive::ArchiveDirectory(
      layout.tsdb_dir(), "prometheus", layout.archive(), level,
      [&](uint64_t files, uint64_t bytes) {
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
      std::string first = version->output.substr(0, version->output.find('\n'));
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
    std::error_code ec;
    if (!keep_tsdb) std::filesystem::remove_all(layout.tsdb_dir(), ec);
    m.state = "archived";
    m.archive = jobmon::ArchiveInfo{layout.archive(), result->sha256, result->bytes, level,
                                    keep_tsdb || static_cast<bool>(ec)};
    std::cerr << "jobmon-archive: " << result->files << " files, " << result->input_bytes
              << " bytes -> " << result->bytes << " bytes, sha256 " << result->sha256 << "\n";
  }
  if (auto written = jobmon::WriteManifest(layout.manifest(), m); !written) {
    std::cerr << "jobmon-archive: error: " << written.error().message << "\n";
    return 1;
  }
  return result ? 0 : 1;
}
