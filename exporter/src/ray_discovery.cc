#include "jobmon/exporter/ray_discovery.h"

#include <sys/stat.h>

#include <cerrno>

#include "jobmon/common/ray_targets.h"
#include "jobmon/common/target_file.h"
#include "jobmon/common/user_file.h"

namespace jobmon::exporter {

HttpAnswer RayDiscovery::Answer() const {
  auto refuse = [](const std::string& why) {
    return HttpAnswer{503, "text/plain", "ray discovery: " + why + "\n"};
  };
  // Not there: Ray has not started (or runs elsewhere). Nothing to scrape.
  struct stat st {};
  if (lstat(path_.c_str(), &st) != 0 && errno == ENOENT)
    return HttpAnswer{200, "application/json", "[]\n"};
  auto file = OpenUserFile(path_);
  if (!file) return refuse(file.error().message);
  if (file->st.st_uid != owner_) return refuse(path_ + " is not the job's user's");
  if (static_cast<size_t>(file->st.st_size) > ray_targets::kMaxFileBytes)
    return refuse(path_ + " is larger than " + std::to_string(ray_targets::kMaxFileBytes) +
                  " bytes");
  auto text = ReadFdRange(file->fd.get(), 0, ray_targets::kMaxFileBytes + 1);
  if (!text) return refuse(text.error().message);
  if (text->size() > ray_targets::kMaxFileBytes) return refuse(path_ + " grew past the limit");
  // Read as this process (the job's user or the service user): a target
  // file it cannot read costs the node's name, not the answer.
  std::map<std::string, std::string> hosts;
  if (!diag_dir_.empty()) hosts = ray_targets::HostsByIp(ReadDiagTargets(diag_dir_, {}).targets);
  auto rendered = ray_targets::RenderHttpSd(*text, allowed_, hosts);
  if (!rendered) return refuse(rendered.error().message);
  return HttpAnswer{200, "application/json", std::move(rendered).value()};
}

void RayDiscovery::ServeOn(MetricsServer& server) const {
  RayDiscovery copy = *this;
  server.AddRoute(std::string(ray_targets::kPath),
                  [copy](const MetricsServer::QueryArgument&) { return copy.Answer(); });
}

}  // namespace jobmon::exporter
