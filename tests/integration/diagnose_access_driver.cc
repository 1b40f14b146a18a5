// A small driver for diagnose_access_test.py: resolves a target, opens it
// with OpenTsdb (a read-only Prometheus for a TSDB or an archive), asks a
// few questions, prints what the test checks, then holds the session until
// stdin says "close" (or a signal ends it: cleanup_on_signal.h).
//
//   diagnose_access_driver <target> [--first-port N] [--temp-parent DIR]
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "jobmon/diagnose/tsdb_access.h"

int main(int argc, char** argv) {
  using namespace jobmon::diagnose;
  if (argc < 2) {
    std::cerr << "usage: diagnose_access_driver <target> [--first-port N] [--temp-parent DIR]\n";
    return 2;
  }
  AccessOptions options;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--first-port") options.first_port = std::stoi(argv[i + 1]);
    if (flag == "--temp-parent") options.temp_parent = argv[i + 1];
  }
  options.start_timeout = 60;
  options.progress = [](std::string_view line) { std::cerr << "progress: " << line << "\n"; };
  auto target = ResolveTarget(argv[1]);
  if (!target) {
    std::cerr << "error: " << target.error().message << "\n";
    return 1;
  }
  auto session = OpenTsdb(*target, options);
  if (!session) {
    std::cerr << "error: " << session.error().message << "\n";
    return 1;
  }
  std::unique_ptr<TsdbSession> owned = std::move(session).value();
  TsdbSession& s = *owned;
  std::cout << "url " << s.url() << "\n";
  std::cout << "tsdb " << s.local_tsdb_dir() << "\n";
  std::cout << "live " << (s.live() ? 1 : 0) << "\n";
  auto range = s.DataRange();
  if (range && *range)
    std::cout << fmt::format("range {:.3f} {:.3f}\n", (*range)->start, (*range)->end);
  auto hosts = s.source().LabelValues("host");
  if (!hosts) {
    std::cerr << "error: " << hosts.error().message << "\n";
    return 1;
  }
  std::cout << "hosts";
  for (const auto& h : *hosts) std::cout << " " << h;
  std::cout << "\n";
  if (range && *range) {
    auto series = s.source().QueryRange(R"(max by (host) (hw_gpu_utilization_percent{host=~".+"}))",
                                        **range, 15);
    if (!series) {
      std::cerr << "error: " << series.error().message << "\n";
      return 1;
    }
    for (const auto& one : *series)
      std::cout << fmt::format("series {} {} {:g}\n", one.Label("host"), one.samples.size(),
                               one.samples.empty() ? 0.0 : one.samples.back().value);
  }
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line) && line != "close") {
  }
  owned.reset();
  std::cout << "closed" << std::endl;
  return 0;
}
