#include "jobmon/common/ray_targets.h"

#include <nlohmann/json.hpp>

#include "jobmon/common/socket_address.h"

namespace jobmon::ray_targets {

namespace {

// A Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, bounded) that is not
// one of Prometheus's reserved "__" labels (__address__ would retarget).
bool IsRayLabelName(std::string_view name) {
  if (name.empty() || name.size() >= 128 || name.starts_with("__")) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  return name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
         std::string_view::npos;
}

}  // namespace

Expected<std::string> RenderHttpSd(std::string_view ray_file_sd, const std::vector<Cidr>& allowed) {
  auto json = nlohmann::json::parse(ray_file_sd, nullptr, false);
  if (json.is_discarded() || !json.is_array())
    return Error{"Ray's service discovery file is not a JSON array"};
  nlohmann::json out = nlohmann::json::array();
  size_t kept = 0;
  for (const auto& group : json) {
    if (!group.is_object() || !group.contains("targets") || !group["targets"].is_array()) continue;
    nlohmann::json labels = nlohmann::json::object();
    if (group.contains("labels") && group["labels"].is_object()) {
      for (const auto& [name, value] : group["labels"].items()) {
        // Ray's own labels; host and the source label are ours (set below).
        if (value.is_string() && IsRayLabelName(name) && name != "host" && name != kSourceLabel)
          labels[name] = value;
      }
    }
    for (const auto& target : group["targets"]) {
      if (!target.is_string() || kept >= kMaxTargets) continue;
      auto address = ParseSocketAddress(target.get<std::string>());
      if (!address || address->address.family != IpAddress::Family::kV4) continue;
      bool inside = false;
      for (const Cidr& cidr : allowed) inside |= cidr.Contains(address->address);
      if (!inside) continue;
      nlohmann::json one = labels;
      one["host"] = address->address.ToString();
      one[std::string(kSourceLabel)] = "ray";
      out.push_back({{"targets", {address->ToBindString()}}, {"labels", one}});
      ++kept;
    }
  }
  return out.dump() + "\n";
}

}  // namespace jobmon::ray_targets
