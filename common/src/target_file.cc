#include "jobmon/common/target_file.h"

#include <nlohmann/json.hpp>

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

}  // namespace jobmon
