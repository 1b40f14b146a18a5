#pragma once
// Ray's own metrics in the job's Prometheus (docs/ray.md): Ray's head
// writes a Prometheus file_sd file listing every Ray node's metrics
// endpoint; the head node's jobmon-exporter serves it, checked and
// labelled, as an http_sd answer at kPath, and the job's prometheus.yml
// (spank/lifecycle/prometheus_config.cc) scrapes what it lists. The one
// home of that route, the file's default place and the answer's shape.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "jobmon/common/target_file.h"

namespace jobmon::ray_targets {

// Ray's default: <temp dir>/prom_metrics_service_discovery.json, the temp
// dir /tmp/ray unless the job moved it (ray start --temp-dir, RAY_TMPDIR);
// plugstack ray_discovery= names another.
inline constexpr std::string_view kDefaultDiscoveryFile =
    "/tmp/ray/prom_metrics_service_discovery.json";
// The head exporter's route for Prometheus's http_sd.
inline constexpr std::string_view kPath = "/ray/sd";
// The source label on every Ray series (the exporters' carry none).
inline constexpr std::string_view kSourceLabel = "jobmon_source";
inline constexpr size_t kMaxFileBytes = 1 << 20;
inline constexpr size_t kMaxTargets = 4096;

// Ray's file_sd text (a JSON array of {"targets": [...], "labels": {...}})
// as the job's http_sd answer: only "A.B.C.D:PORT" targets inside
// `allowed` (the cluster's private ranges: a file the job's user wrote
// sends Prometheus nowhere else), each labelled host=<the node> as the
// exporters' targets are (`host_of_ip`: IP -> node name, from the job's
// target files; the IP itself where none names it) and jobmon_source=ray;
// Ray's own labels are kept. An unreadable file is an error; no usable
// target is an empty list.
Expected<std::string> RenderHttpSd(std::string_view ray_file_sd, const std::vector<Cidr>& allowed,
                                   const std::map<std::string, std::string>& host_of_ip = {});

// IP -> node name from the exporters' targets ("10.0.0.12:9400", "node2").
std::map<std::string, std::string> HostsByIp(const std::vector<ScrapeTarget>& targets);

}  // namespace jobmon::ray_targets
