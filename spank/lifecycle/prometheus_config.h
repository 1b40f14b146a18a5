#pragma once
// The files the job's Prometheus reads: prometheus.yml (file_sd over
// targets/*.json) and one target file per node.

#include <string>

#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

std::string RenderPrometheusConfig(const PluginConfig& config, const JobEnv& job,
                                   const DiagLayout& layout);

// [{"targets": ["10.201.0.11:9400"], "labels": {"host": "node1"}}]
std::string RenderTargetFile(const std::string& address_and_port, const std::string& node);

}  // namespace jobmon::lifecycle
