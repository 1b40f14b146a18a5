#pragma once
// An incident's chart drawn by gnuplot (Debian's gnuplot-nox, its pngcairo
// terminal): the script is built here from the Picture, the program draws
// it. Panel 1: steps against the expected line; one panel per host: GPU
// utilisation (left axis) and power (right axis). The stall, from the last
// progress to the picture's end, is a filled band of kStallColour behind
// every panel, so the busy-wait signature (GPUs at 100% while no step
// moves) shows at a glance.

#include <chrono>
#include <string>

#include "jobmon/chart/picture.h"
#include "jobmon/common/expected.h"

namespace jobmon::chart {

// The stall band's fill: a colour nothing else in the chart uses, so a test
// (and a person) finds the marker in the image.
inline constexpr char kStallColour[] = "#ffc8c8";
inline constexpr int kStallRed = 0xff, kStallGreen = 0xc8, kStallBlue = 0xc8;

struct ChartOptions {
  std::string gnuplot = "gnuplot";  // the program; looked up on PATH
  std::chrono::milliseconds timeout{10000};
  int width = 1000;
  int panel_height = 260;
};

// The gnuplot script that draws `picture` as a PNG on standard output. Every
// text the picture carries (title, host names, labels) is reduced to a safe
// set of characters and single-quoted, so nothing in it is a gnuplot
// command, a backquote substitution or a format.
std::string GnuplotScript(const Picture& picture, const ChartOptions& options);

// Runs gnuplot on the script: the PNG's bytes, or why there is none (no
// gnuplot, its error, the deadline). The picture is Bound() first.
Expected<std::string> RenderPng(Picture picture, const ChartOptions& options);

}  // namespace jobmon::chart
