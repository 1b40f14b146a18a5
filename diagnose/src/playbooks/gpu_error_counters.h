#pragma once
// The GPU error counters (RAS per block, PCIe AER, NVIDIA ECC and Xid, GPU
// lines in dmesg) read as what the job added over a time range: the GPU
// health check's rows 5-8 and the contention checklist's "GPU hardware".

#include <string>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose::playbook {

struct GpuErrorTotals {
  double ras_correctable = 0, ras_uncorrectable = 0;
  double pcie_correctable = 0, pcie_nonfatal = 0, pcie_fatal = 0;
  std::vector<Finding> findings;  // one per series that rose, dated by its first rise
};

GpuErrorTotals GpuErrorsOver(PromSource& source, PlaybookResult& result,
                             const DiagnoseContext& context, const TimeRange& range);

}  // namespace jobmon::diagnose::playbook
