#include "jobmon/chart/gnuplot_chart.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "jobmon/common/run_command.h"

namespace jobmon::chart {
namespace {

// Letters, digits, space and plain punctuation; anything else becomes '?'.
// Backquotes, quotes, '@' (macros), '$' and '\' never reach the script.
std::string SafeText(const std::string& text, size_t max = 120) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max) break;
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        std::string_view(" _-.,:;/()[]#%+=<>*|!?~^&{}").find(c) != std::string_view::npos;
    out.push_back(plain ? c : '?');
  }
  // '&' and '{' are enhanced-text markup in some terminals: the script turns
  // enhanced text off, so they print as they are.
  return "'" + out + "'";
}

std::string Number(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "NaN"; }

void DataBlock(std::string& script, const std::string& name, const std::vector<Point>& points) {
  script += "$" + name + " << EOD\n";
  for (const Point& p : points) script += Number(p.t) + " " + Number(p.v) + "\n";
  script += "EOD\n";
}

std::string TimeAxis(const Picture& picture) {
  // A little room after the end, so that a line at the end (the alert, at
  // the moment the chart is drawn) is not hidden under the frame.
  const double pad = std::max(1.0, 0.03 * (picture.to - picture.from));
  return fmt::format(
      "set xdata time\nset timefmt '%s'\nset format x '%H:%M:%S'\nset xrange [{}:{}]\n"
      "set xlabel 'UTC' offset 0,0.5\n",
      Number(picture.from), Number(picture.to + pad));
}

// The stall band behind the panel drawn next, and a line where it was called.
std::string StallMarks(const Picture& picture) {
  std::string out = "unset object\nunset arrow\nunset label\n";
  if (!picture.stall_since) return out;
  out += fmt::format(
      "set object 1 rect from {}, graph 0 to {}, graph 1 fc rgb '{}' fs solid 1.0 noborder "
      "behind\n",
      Number(*picture.stall_since), Number(picture.to), kStallColour);
  if (picture.alerted_at) {
    out += fmt::format(
        "set arrow 1 from {0}, graph 0 to {0}, graph 1 nohead lc rgb '#c00000' lw 2\n"
        "set label 1 'alert' at {0}, graph 0.92 offset 0.5,0 tc rgb '#c00000'\n",
        Number(*picture.alerted_at));
  }
  return out;
}

}  // namespace

std::string GnuplotScript(const Picture& picture, const ChartOptions& options) {
  const size_t panels = 1 + picture.hosts.size();
  std::string script = fmt::format(
      "set terminal pngcairo size {},{} font 'DejaVu Sans,10' background '#ffffff' noenhanced\n"
      "unset output\nset encoding utf8\nset datafile missing 'NaN'\n",
      options.width, 60 + options.panel_height * static_cast<int>(panels));
  DataBlock(script, "steps", picture.steps);
  DataBlock(script, "expected", picture.expected);
  for (size_t h = 0; h < picture.hosts.size(); ++h) {
    for (size_t i = 0; i < picture.hosts[h].utilization.size(); ++i) {
      DataBlock(script, fmt::format("u{}_{}", h, i), picture.hosts[h].utilization[i].points);
    }
    for (size_t i = 0; i < picture.hosts[h].power.size(); ++i) {
      DataBlock(script, fmt::format("p{}_{}", h, i), picture.hosts[h].power[i].points);
    }
  }
  std::string title = picture.title;
  if (picture.stall_since) {
    title += fmt::format(" - no progress for {:.0f} s (shaded)", picture.to - *picture.stall_since);
  }
  if (picture.hosts_left_out > 0)
    title += fmt::format(" - {} more hosts not shown", picture.hosts_left_out);
  script += fmt::format("set multiplot layout {},1 title {}\n", panels, SafeText(title, 200));
  script += "set lmargin 12\nset rmargin 12\nset grid xtics ytics lc rgb '#e0e0e0'\n";
  script += "set key top left opaque box\n" + TimeAxis(picture);

  // Panel 1: steps.
  script += StallMarks(picture);
  script += "set title 'Training steps (observed and expected)'\nset ylabel 'step'\n";
  script += "unset y2tics\nunset y2label\nset yrange [0:*]\n";
  std::string plot;
  if (!picture.steps.empty()) {
    plot += "$steps using 1:2 with linespoints lw 2 pt 7 ps 0.4 lc rgb '#1f4e9c' title 'observed'";
  }
  if (!picture.expected.empty()) {
    if (!plot.empty()) plot += ", ";
    plot += "$expected using 1:2 with lines dt 2 lw 2 lc rgb '#2a9d2a' title 'expected'";
  }
  if (plot.empty()) {
    // Nothing followed: an empty frame that says so, with the stall band.
    script += "set label 10 'no progress line followed' at graph 0.5, graph 0.5 center\n";
    plot = "NaN notitle";
  }
  script += "plot " + plot + "\n";

  // One panel per host: utilisation (y1) and power (y2).
  for (size_t h = 0; h < picture.hosts.size(); ++h) {
    const HostPanel& host = picture.hosts[h];
    script += StallMarks(picture);
    script +=
        "set title " + SafeText(host.host + ": GPU utilisation (solid) and power (dashed)") + "\n";
    script += "set ylabel 'utilisation %'\nset yrange [0:105]\n";
    script += "set y2label 'W'\nset y2tics\nset y2range [0:*]\n";
    plot.clear();
    for (size_t i = 0; i < host.utilization.size(); ++i) {
      if (!plot.empty()) plot += ", ";
      plot += fmt::format("$u{}_{} using 1:2 axes x1y1 with lines lw 2 lc {} title {}", h, i, i + 1,
                          SafeText(host.utilization[i].label + " %", 40));
    }
    for (size_t i = 0; i < host.power.size(); ++i) {
      if (!plot.empty()) plot += ", ";
      plot += fmt::format("$p{}_{} using 1:2 axes x1y2 with lines dt 2 lw 1.5 lc {} title {}", h, i,
                          i + 1, SafeText(host.power[i].label + " W", 40));
    }
    if (plot.empty()) {
      script += "set label 10 'no GPU samples' at graph 0.5, graph 0.5 center\n";
      plot = "NaN notitle";
    }
    script += "plot " + plot + "\n";
  }
  script += "unset multiplot\n";
  return script;
}

Expected<std::string> RenderPng(Picture picture, const ChartOptions& options) {
  Bound(picture);
  const std::string script = GnuplotScript(picture, options);
  // The script goes to a private directory of ours (0700, mkdtemp), which
  // gnuplot reads; the PNG comes back on its standard output.
  std::string dir_template =
      (std::filesystem::temp_directory_path() / "jobmon-chart-XXXXXX").string();
  if (!mkdtemp(dir_template.data())) return Error{"no temporary directory for the chart script"};
  const std::filesystem::path dir = dir_template;
  const std::filesystem::path path = dir / "chart.gp";
  {
    std::ofstream out(path, std::ios::binary);
    out << script;
    if (!out.flush()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
      return Error{"could not write the chart script"};
    }
  }
  CommandOptions run;
  run.timeout = options.timeout;
  run.max_output = 8 << 20;
  auto result = RunCommand({options.gnuplot, path.string()}, run);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (!result) return Error{options.gnuplot + ": " + result.error().message};
  if (result->timed_out) return Error{options.gnuplot + ": no chart within the deadline"};
  if (result->exit_code == 127) {
    return Error{options.gnuplot + ": not found (install gnuplot-nox, or set [monitor] gnuplot)"};
  }
  if (result->exit_code != 0) {
    return Error{fmt::format("{} exited with {}", options.gnuplot, result->exit_code)};
  }
  if (result->output.rfind("\x89PNG", 0) != 0) return Error{options.gnuplot + ": no PNG came out"};
  return std::move(result->output);
}

}  // namespace jobmon::chart
