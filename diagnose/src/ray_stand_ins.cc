#include "ray_stand_ins.h"

#include <fmt/format.h>

#include <algorithm>

#include "jobmon/common/metric_names.h"

namespace jobmon::diagnose {

namespace {

namespace mn = metric_names;

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

// The end of a `{...}` or `[...]` starting at `open` (quotes skipped), or npos.
size_t JsonClosing(std::string_view text, size_t open, char close) {
  bool quoted = false;
  for (size_t i = open + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == close) {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string Fill(std::string_view expression, std::string_view selector) {
  std::string out;
  for (size_t i = 0; i < expression.size(); ++i) {
    if (expression.compare(i, 2, "{}") == 0) {
      out += selector;
      ++i;
    } else {
      out += expression[i];
    }
  }
  return out;
}

}  // namespace

const std::vector<StandIn>& RayStandIns() {
  // Ray's GpuIndex as the exporter's gpu label; its GPU RAM in MiB as bytes
  // (reporter_agent.py records nvidia-smi's MiB); total = used + available.
  static const std::vector<StandIn> list = {
      {mn::kGpuUtilizationPercent, mn::kRayGpuUtilization,
       R"q(label_replace(ray_node_gpus_utilization{}, "gpu", "$1", "GpuIndex", "(.*)"))q"},
      {mn::kGpuVramUsedBytes, mn::kRayGramUsed,
       R"q(label_replace(ray_node_gram_used{} * 1048576, "gpu", "$1", "GpuIndex", "(.*)"))q"},
      {mn::kGpuVramTotalBytes, mn::kRayGramAvailable,
       R"q(label_replace((ray_node_gram_used{} + ray_node_gram_available{}) * 1048576, "gpu", "$1", "GpuIndex", "(.*)"))q"},
      {mn::kMemAvailableBytes, mn::kRayMemAvailable, R"(ray_node_mem_available{})"},
  };
  return list;
}

std::vector<StandIn> StandInsFor(const std::vector<std::string>& families) {
  auto has = [&](std::string_view name) {
    return std::find(families.begin(), families.end(), name) != families.end();
  };
  std::vector<StandIn> out;
  for (const StandIn& s : RayStandIns()) {
    if (!has(s.family) && has(s.ray)) out.push_back(s);
  }
  return out;
}

std::string RewriteWithStandIns(std::string_view promql, const std::vector<StandIn>& stand_ins) {
  if (stand_ins.empty()) return std::string(promql);
  std::string out;
  size_t i = 0;
  while (i < promql.size()) {
    const StandIn* found = nullptr;
    if (!NameChar(i ? promql[i - 1] : ' ')) {
      for (const StandIn& s : stand_ins) {
        const size_t end = i + s.family.size();
        if (promql.compare(i, s.family.size(), s.family) == 0 &&
            (end == promql.size() || !NameChar(promql[end]))) {
          found = &s;
          break;
        }
      }
    }
    if (!found) {
      // A quoted string (a label value) is never a family.
      if (promql[i] == '"') {
        const size_t close = JsonClosing(promql, i, '"');
        const size_t stop = close == std::string_view::npos ? promql.size() : close + 1;
        out.append(promql.substr(i, stop - i));
        i = stop;
        continue;
      }
      out += promql[i++];
      continue;
    }
    size_t next = i + found->family.size();
    std::string_view selector = "{}";
    if (next < promql.size() && promql[next] == '{') {
      const size_t close = JsonClosing(promql, next, '}');
      if (close == std::string_view::npos) return std::string(promql);  // not PromQL: as asked
      selector = promql.substr(next, close + 1 - next);
      next = close + 1;
    }
    const std::string replaced = Fill(found->expression, selector);
    if (next < promql.size() && promql[next] == '[') {
      const size_t close = JsonClosing(promql, next, ']');
      if (close == std::string_view::npos) return std::string(promql);
      // A range over an expression is a subquery: (expr)[5m:].
      const std::string_view range = promql.substr(next + 1, close - next - 1);
      out += fmt::format("({})[{}{}]", replaced, range, range.find(':') == range.npos ? ":" : "");
      next = close + 1;
    } else {
      out += replaced;
    }
    i = next;
  }
  return out;
}

}  // namespace jobmon::diagnose
