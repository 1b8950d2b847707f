"""Lighthouse's mobile performance of the built book, served gzipped as Read the Docs serves it.

Lighthouse is a measuring tool, not a dependency of the book or its tests::

    npm install --prefix /tmp/lh lighthouse@12      # once (npm registry)
    make html
    python tools/lighthouse.py --lighthouse /tmp/lh/node_modules/.bin/lighthouse

It serves ``_build/html`` on 127.0.0.1 with gzip (``tests/book/site_pages.py``),
runs Lighthouse's default mobile preset (simulated slow 4G, a mid-range phone)
on each page (``--runs``, 3 by default), prints the median of its performance score, the layout shift, the largest
contentful paint and the bytes transferred, and exits with 1 if a page misses
the targets: performance >= 90, layout shift < 0.1, largest contentful paint < 2.5 s
(Lighthouse's "good"), weight <= 1 MB.
Chromium comes from ``CHROME_PATH`` (default ``/usr/bin/chromium``).
"""

import argparse
import json
import statistics
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "book"))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # site_pages reads the language list there

from site_pages import SiteServer  # noqa: E402

PAGES = [
    "en/index.html",
    "en/chapters/06_multi_head_attention.html",
    "es/chapters/09_what_heads_learn.html",
    "en/auto_examples/plot_09_what_heads_learn.html",
]
TARGETS = {"performance": 0.90, "cls": 0.1, "lcp_s": 2.5, "bytes": 1_000_000}


def run(lighthouse, url, save=None):
    cmd = [
        lighthouse, url,
        "--only-categories=performance",
        "--output=json", "--output-path=stdout", "--quiet",
        "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
    ]
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    report = json.loads(out)
    if save is not None:
        save.write_text(out, encoding="utf-8")
    audits = report["audits"]
    return {
        "performance": report["categories"]["performance"]["score"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "lcp_s": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "bytes": audits["total-byte-weight"]["numericValue"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", default=PAGES, help="pages under the site (default: four)")
    parser.add_argument("--site", default=str(ROOT / "_build" / "html"))
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median is printed")
    parser.add_argument("--save", type=Path, help="a folder to keep each run's JSON report in")
    parser.add_argument("--lighthouse", default=shutil.which("lighthouse") or "lighthouse",
                        help="the lighthouse executable (npm install lighthouse)")
    args = parser.parse_args()
    failed = False
    print(f"{'page':50} {'perf':>5} {'CLS':>6} {'LCP s':>6} {'KiB':>6}")
    with SiteServer(Path(args.site), gzip=True) as server:
        for page in args.pages:
            runs = []
            for i in range(args.runs):
                save = None
                if args.save is not None:
                    args.save.mkdir(parents=True, exist_ok=True)
                    save = args.save / f"{page.replace('/', '_')}.{i}.json"
                runs.append(run(args.lighthouse, f"{server.url}/{page}", save))
            r = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            ok = (r["performance"] >= TARGETS["performance"] and r["cls"] < TARGETS["cls"]
                  and r["lcp_s"] < TARGETS["lcp_s"] and r["bytes"] <= TARGETS["bytes"])
            failed |= not ok
            print(f"{page:50} {100 * r['performance']:5.0f} {r['cls']:6.3f} {r['lcp_s']:6.1f} "
                  f"{r['bytes'] / 1024:6.0f}{'' if ok else '  <- misses a target'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
