#pragma once
// The file the job's Prometheus reads: prometheus.yml (file_sd over
// targets/*.json; each node's target file is common/target_file.h's).

#include <string>

#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

std::string RenderPrometheusConfig(const PluginConfig& config, const JobEnv& job,
                                   const DiagLayout& layout);

}  // namespace jobmon::lifecycle
