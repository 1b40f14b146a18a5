// A job log is untrusted input: scan, analyse and render whatever bytes come.
// And a line that repeats the one before it, read from that line instead of
// scanned again (ScanOptions::rescan_repeated_lines), reads as scanned: the
// two readings' reports differ, and it aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/report.h"
#include "jobmon/triage/triage.h"

using namespace jobmon::triage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto create = [](bool rescan_repeated_lines) {
    ScanOptions options;
    options.buffer_bytes = 4096;  // small buffer: exercise chunk edges and long lines
    options.rescan_repeated_lines = rescan_repeated_lines;
    auto created = LogScanner::Create(options);
    if (!created) abort();
    return std::move(created.value());
  };
  static const auto scanner = create(false);
  static const auto rescanning = create(true);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto facts = scanner->ScanText(text);
  if (!facts) return 0;
  AnalysisContext context;
  context.now = 1795168800;
  TriageReport report = Analyze(*facts, context);
  (void)RenderMarkdown(report);
  const std::string json =
      ToJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  if (facts->repeated_lines > 0) {
    auto rescanned = rescanning->ScanText(text);
    if (!rescanned) abort();
    const std::string rescanned_json =
        ToJson(Analyze(*rescanned, context))
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    if (rescanned_json != json) {
      std::fprintf(stderr, "repeated lines read otherwise than scanned:\n%s\n%s\n", json.c_str(),
                   rescanned_json.c_str());
      abort();
    }
  }
  return 0;
}
