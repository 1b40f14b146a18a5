#include "jobmon/common/target_file.h"

#include <dirent.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "jobmon/common/diag_dir.h"

namespace jobmon {

// The shape Prometheus's file_sd reads (documentation/configuration,
// <file_sd_config>): a list of static configs, each "targets" and "labels".
std::string RenderTargetFile(const std::string& address_and_port, const std::string& node) {
  nlohmann::json target =
      nlohmann::json::array({{{"targets", {address_and_port}}, {"labels", {{"host", node}}}}});
  return target.dump(2) + "\n";
}

Expected<std::vector<ScrapeTarget>> ParseFileSdTargets(std::string_view text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_array()) return Error{"file_sd: not a JSON array"};
  std::vector<ScrapeTarget> out;
  for (const auto& group : json) {
    if (!group.is_object() || !group.contains("targets") || !group["targets"].is_array()) continue;
    std::string host;
    if (group.contains("labels") && group["labels"].is_object()) {
      const auto& labels = group["labels"];
      if (labels.contains("host") && labels["host"].is_string()) host = labels["host"];
    }
    for (const auto& target : group["targets"]) {
      if (!target.is_string()) continue;
      std::string address = target;
      out.push_back({host.empty() ? address : host, address});
    }
  }
  return out;
}

DiagTargets ReadDiagTargets(const std::string& diag_dir, const std::optional<JobUser>& user) {
  DiagTargets out;
  const std::string dir = DiagLayout{diag_dir}.targets_dir();
  auto opened = OpenUserFile(dir, {.user = user, .kind = UserFileKind::kDirectory});
  if (!opened) {
    // Not there yet (the prolog has not run): not a problem worth a warning.
    if (opened.error().message.find("No such file") == std::string::npos) {
      out.problems.push_back(opened.error().message);
    }
    return out;
  }
  // The listing comes from the checked directory itself, not the path again.
  std::unique_ptr<DIR, int (*)(DIR*)> listing(fdopendir(opened.value().fd.release()), closedir);
  if (!listing) {
    out.problems.push_back(dir + ": cannot list");
    return out;
  }
  std::vector<std::string> names;
  size_t seen = 0;
  while (dirent* entry = readdir(listing.get())) {
    std::string name = entry->d_name;
    if (name.size() <= kTargetFileSuffix.size() || !name.ends_with(kTargetFileSuffix)) continue;
    // A directory with millions of names costs a bounded walk, not memory.
    if (++seen > kMaxTargetFiles * 4) break;
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  if (names.size() > kMaxTargetFiles) {
    out.problems.push_back(dir + ": more than " + std::to_string(kMaxTargetFiles) +
                           " target files; only the first are read");
    names.resize(kMaxTargetFiles);
  }
  for (const std::string& name : names) {
    auto text = ReadUserFile(dir + "/" + name, kMaxTargetFileBytes, {.user = user});
    if (!text) {
      out.problems.push_back(text.error().message);
      continue;
    }
    auto targets = ParseFileSdTargets(*text);
    if (!targets) {
      out.problems.push_back(dir + "/" + name + ": " + targets.error().message);
      continue;
    }
    for (auto& t : *targets) {
      if (out.targets.size() >= kMaxTargetFiles * 4) break;  // a reader caps further
      out.targets.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace jobmon
