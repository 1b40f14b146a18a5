#include "lifecycle/manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "jobmon/common/atomic_file.h"
#include "jobmon/common/iso_time.h"

namespace jobmon::lifecycle {

using nlohmann::json;

std::string ToJson(const Manifest& m) {
  json out = {{"schema", kManifestSchema},
              {"job_id", m.job_id},
              {"user", m.user},
              {"uid", m.uid},
              {"nodes", m.nodes},
              {"head_node", m.head_node},
              {"diag_dir", m.diag_dir},
              {"prometheus",
               {{"address", m.prometheus_address},
                {"port", m.prometheus_port},
                {"url", m.prometheus_port ? "http://" + m.prometheus_address + ":" +
                                                std::to_string(m.prometheus_port)
                                          : ""}}},
              {"tunnel_command", m.tunnel_command},
              {"targets_dir", m.targets_dir},
              {"versions", {{"jobmon", m.jobmon_version}, {"prometheus", m.prometheus_version}}},
              {"remote_write", m.remote_write},
              {"state", m.state},
              {"degraded", m.degraded},
              {"started_at", m.started_at},
              {"ended_at", m.ended_at},
              {"archive_error", m.archive_error}};
  if (m.archive) {
    out["archive"] = {{"path", m.archive->path},
                      {"sha256", m.archive->sha256},
                      {"bytes", m.archive->bytes},
                      {"compression_level", m.archive->compression_level},
                      {"raw_tsdb_kept", m.archive->raw_tsdb_kept}};
  } else {
    out["archive"] = nullptr;
  }
  // Degraded notes come from files the user writes: invalid UTF-8 there is
  // replaced, not thrown.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Expected<Manifest> ParseManifest(const std::string& text) {
  json in = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_object()) return Error{"manifest is not a JSON object"};
  if (in.value("schema", "") != kManifestSchema) {
    return Error{"manifest schema is not " + std::string(kManifestSchema)};
  }
  try {
    Manifest m;
    m.job_id = in.value("job_id", 0u);
    m.user = in.value("user", "");
    m.uid = in.value("uid", 0u);
    m.nodes = in.value("nodes", std::vector<std::string>{});
    m.head_node = in.value("head_node", "");
    m.diag_dir = in.value("diag_dir", "");
    if (in.contains("prometheus") && in["prometheus"].is_object()) {
      m.prometheus_address = in["prometheus"].value("address", "");
      m.prometheus_port = in["prometheus"].value("port", 0);
    }
    m.tunnel_command = in.value("tunnel_command", "");
    m.targets_dir = in.value("targets_dir", "");
    if (in.contains("versions") && in["versions"].is_object()) {
      m.jobmon_version = in["versions"].value("jobmon", "");
      m.prometheus_version = in["versions"].value("prometheus", "");
    }
    m.remote_write = in.value("remote_write", "");
    m.state = in.value("state", "");
    m.degraded = in.value("degraded", std::vector<std::string>{});
    m.started_at = in.value("started_at", "");
    m.ended_at = in.value("ended_at", "");
    m.archive_error = in.value("archive_error", "");
    if (in.contains("archive") && in["archive"].is_object()) {
      const json& a = in["archive"];
      m.archive =
          ArchiveInfo{a.value("path", ""), a.value("sha256", ""), a.value("bytes", uint64_t{0}),
                      a.value("compression_level", 0), a.value("raw_tsdb_kept", true)};
    }
    return m;
  } catch (const json::exception& e) {
    return Error{std::string("manifest: ") + e.what()};
  }
}

Expected<Manifest> ReadManifest(const std::string& path, const UserFileOptions& options) {
  auto text = ReadUserFile(path, kMaxManifestBytes, options);
  if (!text) return text.error();
  auto parsed = ParseManifest(*text);
  if (!parsed) return Error{path + ": " + parsed.error().message};
  return parsed;
}

Expected<void> WriteManifest(const std::string& path, const Manifest& manifest) {
  return WriteFileAtomically(path, ToJson(manifest), 0644);
}

std::string IsoNow() { return FormatIsoUtc(static_cast<double>(std::time(nullptr))); }

}  // namespace jobmon::lifecycle
