#include "jobmon/common/manifest.h"

#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

#include "jobmon/common/atomic_file.h"

namespace jobmon {
namespace {

using nlohmann::json;

// Takes one field of an object when it has the type of `out`; a field of
// another type is left alone and named. null is the same as absent.
class FieldReader {
 public:
  FieldReader(const json& object, std::string prefix, std::vector<std::string>& problems)
      : object_(object), prefix_(std::move(prefix)), problems_(problems) {}

  void Take(const char* key, std::string& out) {
    if (const json* v = Find(key)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        Problem(key, "not a string");
      }
    }
  }
  void Take(const char* key, bool& out) {
    if (const json* v = Find(key)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        Problem(key, "not a boolean");
      }
    }
  }
  template <typename Int>
  requires std::is_integral_v<Int>
  void Take(const char* key, Int& out) {
    const json* v = Find(key);
    if (!v) return;
    // An integer that fits: no float truncated, no negative wrapped.
    bool fits = false;
    if (v->is_number_unsigned()) {
      fits = std::in_range<Int>(v->get<uint64_t>());
      if (fits) out = static_cast<Int>(v->get<uint64_t>());
    } else if (v->is_number_integer()) {
      fits = std::in_range<Int>(v->get<int64_t>());
      if (fits) out = static_cast<Int>(v->get<int64_t>());
    }
    if (!fits) Problem(key, "not an integer in range");
  }
  void Take(const char* key, std::vector<std::string>& out) {
    const json* v = Find(key);
    if (!v) return;
    if (!v->is_array()) return Problem(key, "not an array");
    std::vector<std::string> items;
    for (const json& item : *v) {
      if (!item.is_string()) return Problem(key, "not an array of strings");
      items.push_back(item.get<std::string>());
    }
    out = std::move(items);
  }
  // A nested object, or nullptr (absent, null, or named as a problem).
  const json* Object(const char* key) {
    const json* v = Find(key);
    if (v && !v->is_object()) {
      Problem(key, "not an object");
      return nullptr;
    }
    return v;
  }

 private:
  const json* Find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  void Problem(const char* key, const char* what) {
    problems_.push_back(prefix_ + key + ": " + what);
  }

  const json& object_;
  std::string prefix_;
  std::vector<std::string>& problems_;
};

}  // namespace

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
              {"tsdb_dir", m.tsdb_dir},
              {"targets_dir", m.targets_dir},
              {"job_log", m.job_log},
              {"versions", {{"jobmon", m.jobmon_version}, {"prometheus", m.prometheus_version}}},
              {"remote_write", m.remote_write},
              {"on_hang", m.on_hang},
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

Expected<ManifestFields> ParseManifestFields(std::string_view text) {
  const json in = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_object()) return Error{"manifest is not a JSON object"};
  ManifestFields out;
  Manifest& m = out.manifest;
  FieldReader top(in, "", out.problems);
  std::string schema;
  top.Take("schema", schema);
  if (schema != kManifestSchema) {
    out.problems.push_back("schema is not " + std::string(kManifestSchema));
  }
  top.Take("job_id", m.job_id);
  top.Take("user", m.user);
  top.Take("uid", m.uid);
  top.Take("nodes", m.nodes);
  top.Take("head_node", m.head_node);
  top.Take("diag_dir", m.diag_dir);
  if (const json* p = top.Object("prometheus")) {
    FieldReader prometheus(*p, "prometheus.", out.problems);
    prometheus.Take("address", m.prometheus_address);
    prometheus.Take("port", m.prometheus_port);
  }
  top.Take("tunnel_command", m.tunnel_command);
  top.Take("tsdb_dir", m.tsdb_dir);
  top.Take("targets_dir", m.targets_dir);
  top.Take("job_log", m.job_log);
  if (const json* v = top.Object("versions")) {
    FieldReader versions(*v, "versions.", out.problems);
    versions.Take("jobmon", m.jobmon_version);
    versions.Take("prometheus", m.prometheus_version);
  }
  top.Take("remote_write", m.remote_write);
  top.Take("on_hang", m.on_hang);
  top.Take("state", m.state);
  top.Take("degraded", m.degraded);
  top.Take("started_at", m.started_at);
  top.Take("ended_at", m.ended_at);
  top.Take("archive_error", m.archive_error);
  if (const json* a = top.Object("archive")) {
    FieldReader archive(*a, "archive.", out.problems);
    ArchiveInfo info;
    archive.Take("path", info.path);
    archive.Take("sha256", info.sha256);
    archive.Take("bytes", info.bytes);
    archive.Take("compression_level", info.compression_level);
    archive.Take("raw_tsdb_kept", info.raw_tsdb_kept);
    m.archive = std::move(info);
  }
  return out;
}

Expected<Manifest> ParseManifest(std::string_view text) {
  auto fields = ParseManifestFields(text);
  if (!fields) return fields.error();
  if (!fields->problems.empty()) return Error{"manifest: " + fields->problems.front()};
  return std::move(fields.value().manifest);
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

}  // namespace jobmon
