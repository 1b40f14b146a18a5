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

// A Slurm node name as a label value: the target files are the user's.
bool IsNodeName(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") ==
             std::string_view::npos;
}

}  // namespace

Expected<std::string> RenderHttpSd(std::string_view ray_file_sd, const std::vector<Cidr>& allowed,
                                   const std::map<std::string, std::string>& host_of_ip) {
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
      const std::string ip = address->address.ToString();
      auto named = host_of_ip.find(ip);
      one["host"] = named == host_of_ip.end() ? ip : named->second;
      one[std::string(kSourceLabel)] = "ray";
      out.push_back({{"targets", {address->ToBindString()}}, {"labels", one}});
      ++kept;
    }
  }
  return out.dump() + "\n";
}

std::map<std::string, std::string> HostsByIp(const std::vector<ScrapeTarget>& targets) {
  std::map<std::string, std::string> out;
  for (const ScrapeTarget& target : targets) {
    auto address = ParseSocketAddress(target.address);
    // A name only: the address is the target file's, the host label its node.
    if (address && target.host != target.address && IsNodeName(target.host))
      out.emplace(address->address.ToString(), target.host);
  }
  return out;
}

}  // namespace jobmon::ray_targets
