#!/usr/bin/env python3
"""trail's search benchmark: latency of `Store::search` on a big store, p50/p90 over N runs.

usage: python3 bench/search.py STORE [--runs 100]
       python3 bench/search.py STORE --process TRAIL [--runs 30]

STORE is a store built by `python3 bench/run.py --corpus DIR --keep` (it prints the path).
Runs crates/trail-store/examples/search_bench.rs in release mode: one process, the store
opened read-only, each query run --runs times after the previous ones (a warm page cache, as
for a user searching twice), 20 hits asked per search, snippets included.
With --process, times whole processes instead (what a person waits for): the binary TRAIL runs
`search --json --limit 20 QUERY` --runs times per query, in rounds over the queries, and p50,
p90 and the range are printed (issue 43's targets: p50 at most 10 ms for two words, 50 ms for
`the`).
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A rare word (a synthetic word in ~3 messages), a two-word AND of mid-frequency words, a
# phrase, a prefix, a common word (~50k messages) and the near-stopword `the` (~150k).
QUERIES = [
    ("rare word", "aalways"),
    ("two-word AND", "install error"),
    ("phrase", '"error function"'),
    ("prefix", "deploy*"),
    ("common word", "what"),
    ("near-stopword", "the"),
]


def whole_process(trail, store, runs):
    """p50, p90, min and max (ms) of whole `trail search` processes, per query."""
    times = {q: [] for _, q in QUERIES}
    for _ in range(runs):
        for _, q in QUERIES:
            t = time.perf_counter()
            subprocess.run([trail, "--store", store, "--color", "never", "search", "--json",
                            "--limit", "20", "--", q], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
            times[q].append((time.perf_counter() - t) * 1e3)
    print("%-14s %-34s %9s %9s %9s %9s" % ("kind", "query", "p50 ms", "p90 ms", "min", "max"))
    for kind, q in QUERIES:
        ts = sorted(times[q])
        pct = lambda p: ts[min(int(len(ts) * p), len(ts) - 1)]
        print("%-14s %-34s %9.1f %9.1f %9.1f %9.1f" % (kind, q, pct(0.5), pct(0.9), ts[0], ts[-1]))
    print("load average at the end: %.1f" % os.getloadavg()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--process", metavar="TRAIL", help="time whole processes of this binary")
    a = ap.parse_args()
    if a.process:
        return whole_process(a.process, a.store, a.runs)
    env = dict(os.environ)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-store", "--example", "search_bench"],
                   cwd=ROOT, check=True, env=env)
    target = env.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    exe = os.path.join(target, "release", "examples", "search_bench")
    out = subprocess.run([exe, a.store, str(a.runs)] + [q for _, q in QUERIES], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    lines = out.splitlines()
    print("%-14s %s" % ("kind", lines[0]))
    for (kind, _), line in zip(QUERIES, lines[1:]):
        print("%-14s %s" % (kind, line))


if __name__ == "__main__":
    sys.exit(main())
