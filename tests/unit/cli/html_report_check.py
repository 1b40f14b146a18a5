#!/usr/bin/python3
"""Looks at a jobmon HTML report (`jobmon status --html`, `jobmon diagnose
--html`) the way a person would: renders it in headless Chromium (Debian's
`chromium`) and checks the screenshot is the expected page, and reads the
chart inside it for the stall marker.

Checks, each printed with its figures:
- the file is self-contained: at least one PNG as a data: URI, no script,
  no src/href/link that loads anything else (a URL in the text is text);
- the chart (the first image) shows the stall band: pixels of exactly
  chart/include/jobmon/chart/gnuplot_chart.h's kStallColour, a band that
  starts after the chart's left edge and reaches its right part (the stall
  runs to the picture's end), with the alert's red line inside it (unless
  --no-alert-line);
- the screenshot is a rendered page, not a blank one (colours, ink), and
  the chart is in it (the band's colour on screen).
Exit 0 when every check passed, 1 otherwise. Pillow reads the PNGs.
"""
import argparse
import base64
import io
import os
import re
import subprocess
import sys
import tempfile

from PIL import Image

STALL = (0xFF, 0xC8, 0xC8)  # kStallColour
ALERT = (0xC0, 0x00, 0x00)  # the alert line's colour in gnuplot_chart.cc


def count(image, colour):
    return sum(n for n, c in image.getcolors(image.width * image.height) if c == colour)


def columns_with(image, colour, tolerance=0):
    """Columns with a pixel of `colour` (each channel within `tolerance`:
    a thin line is anti-aliased into its neighbours)."""
    px = image.load()

    def near(p):
        return all(abs(a - b) <= tolerance for a, b in zip(p, colour))
    return [x for x in range(image.width) if any(near(px[x, y]) for y in range(image.height))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--html", required=True)
    ap.add_argument("--screenshot", required=True, help="where the screenshot goes")
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--no-alert-line", action="store_true",
                    help="the chart has a stall but no alert line (a diagnosis)")
    args = ap.parse_args()
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    text = open(args.html, encoding="utf-8").read()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    check(len(images) >= 1, f"{len(images)} PNG image(s) inside the file")
    check("<script" not in text.lower(), "no script")
    # Text may name a URL (a Prometheus to tunnel to); no tag may load one.
    tags = re.findall(r"<[a-zA-Z][^>]*>", text)
    loads = [v for tag in tags for v in re.findall(
        r'\s(?:src|href|action|srcset|poster)\s*=\s*["\']?([^"\'\s>]*)', tag, re.IGNORECASE)
        if not v.startswith("data:image/png;base64,")]
    loads += [tag for tag in tags if re.match(r"<(link|iframe|object|embed|base)\b", tag, re.I)]
    check(not loads,
          f"nothing loaded from elsewhere ({len(loads)} tags that would: {loads[:3]})")
    if not images:
        print(f"{len(failures)} check(s) failed")
        return 1

    chart = Image.open(io.BytesIO(base64.b64decode(images[0]))).convert("RGB")
    stall = count(chart, STALL)
    share = stall / (chart.width * chart.height)
    check(share >= 0.01, f"chart {chart.width}x{chart.height}: stall band {stall} px ({share:.1%})")
    band = columns_with(chart, STALL)
    if band:
        left, right = band[0], band[-1]
        check(left > chart.width * 0.05 and right > chart.width * 0.75,
              f"the band spans columns {left}..{right} of {chart.width}: after the start, to the end")
        if not args.no_alert_line:
            red = [x for x in columns_with(chart, ALERT, tolerance=48) if left - 2 <= x <= right + 2]
            check(bool(red), f"the alert line inside the band ({len(red)} columns)")

    with tempfile.TemporaryDirectory(prefix="jobmon-chromium-") as profile:
        run = subprocess.run(
            [args.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
             "--window-size=1200,2200", f"--screenshot={os.path.abspath(args.screenshot)}",
             "file://" + os.path.abspath(args.html)],
            capture_output=True, text=True, timeout=120)
    check(run.returncode == 0 and os.path.exists(args.screenshot),
          f"chromium rendered the page (exit {run.returncode})")
    if os.path.exists(args.screenshot):
        shot = Image.open(args.screenshot).convert("RGB")
        colours = shot.getcolors(shot.width * shot.height) or []
        white = sum(n for n, c in colours if c == (255, 255, 255))
        ink = 1 - white / (shot.width * shot.height)
        check(len(colours) >= 20 and ink >= 0.02,
              f"screenshot {shot.width}x{shot.height}: {len(colours)} colours, {ink:.1%} ink (not blank)")
        on_screen = count(shot, STALL)
        check(on_screen >= stall * 0.25,
              f"the chart is on the page: {on_screen} px of the stall band on screen (chart: {stall})")
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
