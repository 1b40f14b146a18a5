#include "evidence/evidence_feed.h"

#include <cerrno>
#include <cstring>

#include "jobmon/monitor/diag_files.h"

namespace jobmon::monitor {

std::unique_ptr<EvidenceFeed> MakeEvidenceFeed(FeedContext context) {
  return context.config.StoreMode() ? MakeStoreFeed(std::move(context))
                                    : MakeScrapeFeed(std::move(context));
}

void ReadTunnelCommand(const FeedContext& context, const FeedJob& job) {
  auto manifest = ReadDiagManifest(job.record.diag_dir, job.user, job.record.node_list);
  if (manifest) {
    job.tunnel_command = manifest->tunnel_command;
  } else if (manifest.error().message.find(std::strerror(ENOENT)) == std::string::npos) {
    context.warn_once(job.record.job_id, "diag_file_refused", manifest.error().message);
  }
}

}  // namespace jobmon::monitor
