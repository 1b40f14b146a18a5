#pragma once
// The head node's exporter hands the job's Prometheus Ray's metrics
// endpoints (common/include/jobmon/common/ray_targets.h, the contract):
// Ray's own service-discovery file, read fresh on each request, only when
// the job's user owns it (another user's Ray on a shared node is not the
// job's), bounded and without blocking; answered as http_sd JSON.

#include <sys/types.h>

#include <string>
#include <vector>

#include "jobmon/common/ip_address.h"
#include "jobmon/common/metrics_server.h"

namespace jobmon::exporter {

class RayDiscovery {
 public:
  // `path`: Ray's file; `owner`: the job's uid; `allowed`: where targets
  // may be (the cluster's private ranges); `diag_dir`: the job's, whose
  // target files name each node's address (Ray's targets are labelled with
  // the node, as the exporters' are; "": with the IP).
  RayDiscovery(std::string path, uid_t owner, std::vector<Cidr> allowed, std::string diag_dir = "")
      : path_(std::move(path)),
        owner_(owner),
        allowed_(std::move(allowed)),
        diag_dir_(std::move(diag_dir)) {}

  // 200 with the targets; 200 with [] while Ray has written nothing (the job
  // has not started Ray, or never will); 503 for a file that is not the
  // job's user's, not a regular file, too large or not Ray's JSON.
  HttpAnswer Answer() const;
  void ServeOn(MetricsServer& server) const;

 private:
  std::string path_;
  uid_t owner_;
  std::vector<Cidr> allowed_;
  std::string diag_dir_;
};

}  // namespace jobmon::exporter
