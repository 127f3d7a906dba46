#!/usr/bin/env python3
"""`aotfuzz report` in a real browser: three campaigns with injected bugs write into one findings
directory, the page is rendered by headless Chromium, and the test checks that it loaded with no
console message, that it loads nothing from outside, that its screenshot shows the plots (the
colours of their lines) and the bundles' pictures (the fill colour graphviz gives the first
target's regions), and that each legend entry is drawn in its series' colour (the computed styles
of a copy of the page with a probe script). The unique findings are steps that end at the number
of bundles, across the three campaigns. Usage: report_in_browser.py AOTFUZZ CHROMIUM WORK_DIR
"""
import html as htmllib
import json
import os
import re
import shutil
import subprocess
import sys

from PIL import Image

AOTFUZZ, CHROMIUM, WORK = sys.argv[1], sys.argv[2], sys.argv[3]

# Each campaign's seed and flags; together their findings fill eleven bundles, one more than the
# test asks so that a generator change that shifts one finding does not fail it. Without
# the structural check, a buggy merge shows as PartitionGraph refusing what it made.
CAMPAIGNS = [
    (1, ["--inject", "tuple-arg-first-field", "--inject", "dropped-duplicate-output",
         "--inject", "merge-visit-order"]),
    (2, ["--inject", "swapped-output-order", "--inject", "reuse-live-storage",
         "--inject", "fuse-stops-at-tuple-get-item", "--inject", "ignored-kernel-error",
         "--inject", "unsanitized-input-names"]),
    (5, ["--inject", "stale-unpacked-arg", "--inject", "merge-siblings", "--inject",
         "empty-tuple-output", "--no-structure"]),
]
MIN_BUNDLES = 10

# Line colours of the three plots (report/html_report.cc) and graphviz's fill for the regions of
# the first target (ir/dot.cc's palette).
PLOT_COLOURS = {"throughput": (0xd6, 0x27, 0x28), "unique findings": (0x1f, 0x77, 0xb4),
                "multi-output cases": (0x2c, 0xa0, 0x2c)}
REGION_FILL = (0x8d, 0xd3, 0xc7)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)


def render(page, screenshot, height):
    """Chromium's console messages while loading `page`, and its screenshot."""
    profile = os.path.join(WORK, "profile")
    shutil.rmtree(profile, ignore_errors=True)
    r = run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
             "--hide-scrollbars", "--window-size=1400,%d" % height,
             "--screenshot=" + screenshot, "file://" + os.path.abspath(page)])
    if not os.path.exists(screenshot):
        fail("chromium made no screenshot (exit %d):\n%s" % (r.returncode, r.stderr))
    return [line for line in r.stderr.splitlines() if ":CONSOLE" in line]


# Run in a copy of the page (the page itself has no script): each legend entry's computed fill
# and its swatch's stroke, against the computed stroke of the line of its series.
PROBE = """<script>
const out = [];
for (const svg of document.querySelectorAll('svg.plot')) {
  for (const text of svg.querySelectorAll('text.legend')) {
    const i = text.getAttribute('data-series');
    const line = svg.querySelector(
        'polyline[data-series="' + i + '"], path[data-series="' + i + '"]');
    const swatch = svg.querySelector('line.swatch[data-series="' + i + '"]');
    out.push({plot: svg.id, name: text.textContent, fill: getComputedStyle(text).fill,
              swatch: swatch ? getComputedStyle(swatch).stroke : null,
              stroke: line ? getComputedStyle(line).stroke : null});
  }
}
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def computed_legends(page):
    """The probe's findings in a copy of `page`."""
    probe = os.path.join(WORK, "probe.html")
    with open(page) as f:
        text = f.read()
    with open(probe, "w") as f:
        f.write(text.replace("</body>", PROBE + "</body>"))
    profile = os.path.join(WORK, "profile")
    shutil.rmtree(profile, ignore_errors=True)
    r = run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=" + profile, "--dump-dom", "file://" + os.path.abspath(probe)])
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout, re.S)
    if not m:
        fail("the probe page gave no result (exit %d):\n%s" % (r.returncode, r.stderr[-2000:]))
    return json.loads(htmllib.unescape(m.group(1)))


def check_legends(page):
    legends = computed_legends(page)
    # Throughput 1, unique findings 1, features 4.
    if len(legends) != 6:
        fail("%d legend entries, not 6: %s" % (len(legends), legends))
    for e in legends:
        if e["stroke"] is None or e["fill"] != e["stroke"] or e["swatch"] != e["stroke"]:
            fail("the legend %r of the %s plot is drawn in %s (swatch %s), its line in %s"
                 % (e["name"], e["plot"], e["fill"], e["swatch"], e["stroke"]))
    if len({e["fill"] for e in legends if e["plot"] == "features"}) != 4:
        fail("the feature plot's four legend entries do not have four colours: %s" % legends)


def check_findings_steps(html, bundles):
    """The unique findings plot: one path, flat then straight up, never down, ending at the
    number of bundles (the top tick), however many of them the later campaigns saw again."""
    svg = re.search(r'<svg class="plot" id="findings".*?</svg>', html, re.S)
    path = svg and re.search(r'<path class="steps" [^>]*d="([^"]*)"', svg.group(0))
    if not path:
        fail("no path of steps in the unique findings plot")
    svg, d = svg.group(0), path.group(1)
    if not re.fullmatch(r"M[\d.]+,[\d.]+( H[\d.]+ V[\d.]+)* H[\d.]+", d):
        fail("the unique findings are not drawn as steps: %s" % d)
    ys = [float(y) for y in re.findall(r"(?:,|V)([\d.]+)", d)]
    if any(b >= a for a, b in zip(ys, ys[1:])):
        fail("the unique findings step down or stay level at a step: %s" % d)
    top = re.search(r'y="([\d.]+)" text-anchor="end" dominant-baseline="middle">%d</text>'
                    % bundles, svg)
    if not top or float(top.group(1)) != ys[-1]:
        fail("the unique findings do not end at %d, the number of bundles: %s" % (bundles, svg))
    return len(ys) - 1


def pixels_near(colours, colour, tolerance=12):
    return sum(n for n, c in colours if all(abs(c[i] - colour[i]) <= tolerance for i in range(3)))


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    findings = os.path.join(WORK, "findings")

    # The console check itself must see a console error when there is one.
    bad = os.path.join(WORK, "bad.html")
    with open(bad, "w") as f:
        f.write("<!DOCTYPE html><body><script>console.error('planted')</script></body>")
    if not any("planted" in line for line in render(bad, os.path.join(WORK, "bad.png"), 300)):
        fail("the console check saw nothing on a page that logs an error")

    for seed, flags in CAMPAIGNS:
        r = run([AOTFUZZ, "fuzz", "--cases", "600", "--seed", str(seed), "--jobs", "2",
                 "--findings", findings] + flags)
        if r.returncode != 1:
            fail("campaign %d exited %d, not 1 (findings):\n%s" % (seed, r.returncode, r.stderr))
    bundles = [d for d in os.listdir(findings)
               if os.path.exists(os.path.join(findings, d, "verdict.json"))]
    if len(bundles) < MIN_BUNDLES:
        fail("the fixture has %d bundles, not %d: %s" % (len(bundles), MIN_BUNDLES, bundles))
    # Records are the .json files; campaigns/ also holds the status files' lock.
    records = [n for n in os.listdir(os.path.join(findings, "campaigns")) if n.endswith(".json")]
    if len(records) != len(CAMPAIGNS):
        fail("not one campaign record per campaign")

    page = os.path.join(WORK, "report.html")
    r = run([AOTFUZZ, "report", findings, "--out", page])
    if r.returncode != 0:
        fail("aotfuzz report exited %d: %s" % (r.returncode, r.stderr))
    html = open(page).read()
    rows = len(re.findall(r'<tr class="bundle"', html))
    if rows != len(bundles):
        fail("%d bundle rows for %d bundles" % (rows, len(bundles)))
    outside = re.findall(r'(?:src|href)\s*=\s*"(?!#)[^"]*"|<script|<link|@import|url\(', html)
    if outside:
        fail("the page loads or runs something: %s" % outside[:5])

    steps = check_findings_steps(html, len(bundles))

    shot = os.path.join(WORK, "report.png")
    console = render(page, shot, 9000)
    if console:
        fail("console messages while loading the page:\n" + "\n".join(console))
    image = Image.open(shot).convert("RGB")
    colours = image.getcolors(image.width * image.height)
    for name, colour in PLOT_COLOURS.items():
        n = pixels_near(colours, colour)
        if n < 200:
            fail("the %s plot shows %d pixels of its line colour" % (name, n))
    fill = pixels_near(colours, REGION_FILL)
    # A region box of a reduced graph's picture is some thousands of pixels at 360 px wide.
    if fill < 1000 * MIN_BUNDLES // 2:
        fail("the bundle pictures show only %d pixels of region fill" % fill)
    check_legends(page)
    print("ok: %d bundles from %d campaigns in %d steps, %d console messages, region fill %d px, "
          "legends in their series' colours" % (len(bundles), len(CAMPAIGNS), steps, len(console),
                                                fill))


main()
