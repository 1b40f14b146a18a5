// A job log is untrusted input: scan, analyse and render whatever bytes come.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/report.h"
#include "jobmon/triage/triage.h"

using namespace jobmon::triage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto scanner = [] {
    ScanOptions options;
    options.buffer_bytes = 4096;  // small buffer: exercise chunk edges and long lines
    auto created = LogScanner::Create(options);
    if (!created) abort();
    return std::move(created.value());
  }();
  auto facts = scanner->ScanText({reinterpret_cast<const char*>(data), size});
  if (!facts) return 0;
  AnalysisContext context;
  context.now = 1795168800;
  TriageReport report = Analyze(*facts, context);
  (void)RenderMarkdown(report);
  (void)ToJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  return 0;
}
