#pragma once
// The file the job's Prometheus reads: prometheus.yml (file_sd over
// targets/*.json; each node's target file is common/target_file.h's).

#include <string>

#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

// `ray_sd`: the head exporter's Ray-targets URL (common/ray_targets.h);
// "": no Ray scrape job.
std::string RenderPrometheusConfig(const PluginConfig& config, const JobEnv& job,
                                   const DiagLayout& layout, const std::string& ray_sd = "");

}  // namespace jobmon::lifecycle
