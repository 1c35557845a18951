#!/usr/bin/env python3
"""Side-by-side full-index timing of two trail binaries on one corpus (issue 45).

usage: python3 bench/ab_index.py --old OLD_TRAIL --new NEW_TRAIL --corpus DIR [--pairs 5]

Each pair runs a full index into a new store with each binary, the order alternating from pair
to pair (old-new, new-old, ...), after the corpus has been read once into the page cache and the
previous run's dirty pages written back (bench/run.py's warm-up and quiesce). It prints every
run's wall time and CPU time, each pair's ratio new/old, and the median, lowest and highest
ratio, so the load of a shared machine shows as spread rather than hiding in one figure.
"""

import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import jsonl_files, load, median, quiesce, run  # noqa: E402


def warm(paths):
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass


def full_index(trail, corpus, work):
    store = os.path.join(work, "trail.db")
    for suffix in ("", "-wal", "-shm", "-search", "-search-wal", "-search-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    quiesce()
    before = load()
    cmd = [trail, "--color", "never", "index", "--source", "claude-code", "--root",
           "claude-code=" + corpus]
    wall, cpu, rss, _, _ = run(cmd, dict(os.environ, TRAIL_STORE=store))
    size = sum(os.path.getsize(store + s) for s in ("", "-search") if os.path.exists(store + s))
    return wall, cpu, rss, before, size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True, help="the binary before the change")
    ap.add_argument("--new", required=True, help="the binary with the change")
    ap.add_argument("--corpus", required=True, help="a Claude Code corpus (gen_claude_corpus.py)")
    ap.add_argument("--pairs", type=int, default=5)
    a = ap.parse_args()
    paths = jsonl_files(a.corpus)
    print("corpus: %s, %.1f MiB in %d files" % (
        a.corpus, sum(os.path.getsize(p) for p in paths) / 2**20, len(paths)))
    work = tempfile.mkdtemp(prefix="trail-ab-")
    ratios, cpu_ratios = [], []
    try:
        for i in range(a.pairs):
            order = [("old", a.old), ("new", a.new)]
            if i % 2:
                order.reverse()
            got = {}
            for name, trail in order:
                warm(paths)
                got[name] = full_index(trail, a.corpus, work)
                wall, cpu, rss, before, size = got[name]
                print("pair %d %s: wall %.2f s, CPU %.2f s, peak RSS %.0f MB, load before %.1f, "
                      "store %.1f MiB" % (i + 1, name, wall, cpu, rss, before, size / 2**20),
                      flush=True)
            ratios.append(got["new"][0] / got["old"][0])
            cpu_ratios.append(got["new"][1] / got["old"][1])
            print("pair %d: new/old wall %.3f, CPU %.3f" % (i + 1, ratios[-1], cpu_ratios[-1]),
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("wall new/old: median %.3f, lowest %.3f, highest %.3f (%d pairs)" % (
        median(ratios), min(ratios), max(ratios), len(ratios)))
    print("CPU new/old: median %.3f, lowest %.3f, highest %.3f" % (
        median(cpu_ratios), min(cpu_ratios), max(cpu_ratios)))


if __name__ == "__main__":
    main()
