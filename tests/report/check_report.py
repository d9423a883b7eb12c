#!/usr/bin/env python3
"""Opens `fb report` pages in headless Chromium (issue 41).

For the corpus folder and a generated log of every problem type: writes
the page, opens it in Chromium with its scripts run, and checks that no
console message was logged (the page logs only errors), that every chart
was drawn, that every figure the page shows (``data-stat`` with its
``data-value``) equals ``fb stats --json``'s on the same inputs, and that
the page loads nothing from elsewhere. Pages of generated CB and CCB logs
show policies (``--policy``): their figures (``data-eval``) must equal
``fb evaluate --json``'s. Takes a screenshot of each page.

Usage: check_report.py FB DATA OUT [CHROMIUM]
Prints "N passed, N failed"; exits 1 when a check failed.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

PROBLEM_TYPES = ["cb", "ccb", "slates", "ca", "multistep"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


MISSING = object()


def at(value, path):
    """The value at ``path`` of a report, or ``MISSING`` where the path
    leads nowhere (below a null: the page must then name the null itself,
    as it does for an interval one decision does not give)."""
    for key in path.split("."):
        if isinstance(value, list):
            value = value[int(key)] if key.isdigit() and int(key) < len(value) else MISSING
        elif isinstance(value, dict):
            value = value.get(key, MISSING)
        else:
            return MISSING
    return value


def chromium_args(browser, page):
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        page.resolve().as_uri(),
    ]


def console_lines(stderr):
    """Console messages Chromium logged for the page (it logs them as
    ``...:CONSOLE(line)] "text", source: ...``); uncaught errors too."""
    return [
        line
        for line in stderr.splitlines()
        if "CONSOLE" in line or "Uncaught" in line
    ]


def policy_problems(fb, inputs, flags, extra, dom):
    """With ``--policy`` among ``extra``: the figures of the policies
    (``data-eval``) must equal ``fb evaluate --json`` with the same
    policies, by the windows the page chose (``data-eval-by``)."""
    policies = [extra[i + 1] for i, x in enumerate(extra[:-1]) if x == "--policy"]
    shown = re.findall(r'data-eval="([^"]*)" data-value="([^"]*)"', dom)
    if not policies:
        return [f"{len(shown)} data-eval figures without --policy"] if shown else []
    by = re.search(r'data-eval-by="(\w+)"', dom)
    if not by:
        return ["--policy given, but no data-eval-by in the DOM"]
    asked = [a for p in policies for a in ("--policy", p)]
    e = run([fb, "evaluate", "--json", "-q", "--by", by.group(1), *asked, *flags, *inputs])
    if e.returncode != 0:
        return [f"fb evaluate exited {e.returncode}: {e.stderr.strip()}"]
    evaluated = json.loads(e.stdout)
    problems = []
    # Per policy (the logged one and those asked): decisions and estimate.
    if len(shown) < 2 * (len(policies) + 1):
        problems.append(f"only {len(shown)} figures with data-eval in the DOM")
    for path, value in shown:
        got = json.loads(html.unescape(value))
        want = at(evaluated, html.unescape(path))
        if got != want:
            problems.append(f"{path}: the page shows {got!r}, fb evaluate --json says {want!r}")
    return problems


def check(name, fb, browser, inputs, flags, extra, out):
    """Problems found with one page (an empty list when it passed)."""
    problems = []
    page = out / f"{name}.html"
    r = run([fb, "report", "--force", "-q", "-o", str(page), *flags, *extra, *inputs])
    if r.returncode != 0:
        return [f"fb report exited {r.returncode}: {r.stderr.strip()}"]
    s = run([fb, "stats", "--json", "-q", *flags, *inputs])
    if s.returncode != 0:
        return [f"fb stats exited {s.returncode}: {s.stderr.strip()}"]
    stats = json.loads(s.stdout)
    text = page.read_text(encoding="utf-8")
    if len(text) >= 2 << 20:
        problems.append(f"the page is {len(text)} bytes (2 MiB or more)")
    for bad in ("http://", "https://", " src=", "<link", "url("):
        if bad in text:
            problems.append(f"the page holds {bad!r}: it is not self-contained")

    dom = run([*chromium_args(browser, page)[:-1], "--dump-dom", page.resolve().as_uri()])
    if dom.returncode != 0:
        return problems + [f"chromium --dump-dom exited {dom.returncode}: {dom.stderr[-2000:]}"]
    for line in console_lines(dom.stderr):
        problems.append(f"console: {line.strip()}")
    body = re.search(r'<body data-charts="(\d+)"([^>]*)>', dom.stdout)
    if not body:
        problems.append("no <body data-charts> in the DOM")
    else:
        drawn = re.search(r'data-charts-drawn="(\d+)"', body.group(2))
        want = int(body.group(1))
        if not drawn:
            problems.append("the drawing script did not finish (no data-charts-drawn)")
        elif int(drawn.group(1)) != want:
            problems.append(f"{drawn.group(1)} of {want} charts drawn")
        canvases = dom.stdout.count("<canvas")
        if canvases < want:
            problems.append(f"{canvases} canvases for {want} charts")
    figures = re.findall(r'data-stat="([^"]*)" data-value="([^"]*)"', dom.stdout)
    if len(figures) < 10:
        problems.append(f"only {len(figures)} figures with data-stat in the DOM")
    for path, value in figures:
        shown = json.loads(html.unescape(value))
        want = at(stats, html.unescape(path))
        if shown != want:
            problems.append(f"{path}: the page shows {shown!r}, fb stats --json says {want!r}")

    problems += policy_problems(fb, inputs, flags, extra, dom.stdout)

    shot = out / f"{name}.png"
    r = run(
        [
            *chromium_args(browser, page)[:-1],
            "--window-size=1100,3300",
            f"--screenshot={shot}",
            page.resolve().as_uri(),
        ]
    )
    if r.returncode != 0 or not shot.exists() or shot.stat().st_size < 10_000:
        problems.append(f"no screenshot ({r.returncode}): {r.stderr[-500:]}")
    return problems


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    fb, data, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    browser = sys.argv[4] if len(sys.argv) > 4 else (
        shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    )
    out.mkdir(parents=True, exist_ok=True)
    cases = [("corpus", [str(data / "valid_joined_logs")], [], [])]
    for kind in PROBLEM_TYPES:
        log = out / f"gen-{kind}.fb"
        log.unlink(missing_ok=True)
        # Decisions come about a second apart: CB and CCB, which show
        # policies per hour, get enough for three hours.
        events = "8000" if kind in ("cb", "ccb") else "3000"
        r = run([fb, "gen", "--problem-type", kind, "--events", events, "--seed", "41",
                 "--deferred", "0.1", "--activated", "0.5", "-o", str(log)])
        if r.returncode != 0:
            print(f"FAIL gen-{kind}: fb gen exited {r.returncode}: {r.stderr.strip()}")
            cases.append((f"gen-{kind}", None, None, None))
            continue
        # The join window and the policies are the report's own options
        # (stats has none); the policies' figures are fb evaluate's.
        extra = ["--join-window", "10m"]
        if kind in ("cb", "ccb"):
            extra += ["--policy", "uniform", "--policy", "baseline"]
        cases.append((f"gen-{kind}", [str(log)], [], extra))
    passed = failed = 0
    for name, inputs, flags, extra in cases:
        if inputs is None:
            failed += 1
            continue
        problems = check(name, fb, browser, inputs, flags, extra, out)
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for p in problems[:20]:
                print(f"  {p}")
        else:
            passed += 1
            print(f"ok   {name} ({out / (name + '.png')})")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
