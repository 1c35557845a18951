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
p95 and the range are printed per query, then per class of queries, every run of its queries
pooled: "two words" (eight two-word ANDs of the corpus' common words, `install error` among
them) and "the" (issue 43's targets: whole-process p50 at most 10 ms for two words, 50 ms for
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

# Issue 43's classes for whole processes: two words (two of the corpus' common words, each in
# 3 to 6 % of the 1 GiB corpus' prompts, ANDed: 23 to 41 prompts hold both) and `the`.
CLASSES = [
    ("two words", ["install error", "query list", "server call", "branch user",
                   "database error", "cache field", "module line", "request change"]),
    ("the", ["the"]),
]


def percentile(ts, p):
    ts = sorted(ts)
    return ts[min(int(len(ts) * p), len(ts) - 1)]


def whole_process(trail, store, runs):
    """p50, p95, min and max (ms) of whole `trail search` processes, per query, then per
    class (every run of the class's queries)."""
    queries = [q for _, q in QUERIES] + [q for _, qs in CLASSES for q in qs]
    queries = list(dict.fromkeys(queries))
    times = {q: [] for q in queries}
    for _ in range(runs):
        for q in queries:
            t = time.perf_counter()
            subprocess.run([trail, "--store", store, "--color", "never", "search", "--json",
                            "--limit", "20", "--", q], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
            times[q].append((time.perf_counter() - t) * 1e3)
    line = "%-14s %-34s %9s %9s %9s %9s"
    print(line % ("kind", "query", "p50 ms", "p95 ms", "min", "max"))
    for kind, q in QUERIES:
        ts = times[q]
        print("%-14s %-34s %9.1f %9.1f %9.1f %9.1f" % (kind, q, percentile(ts, 0.5),
                                                      percentile(ts, 0.95), min(ts), max(ts)))
    print(line % ("class", "queries", "p50 ms", "p95 ms", "min", "max"))
    for name, qs in CLASSES:
        ts = [t for q in qs for t in times[q]]
        print("%-14s %-34s %9.1f %9.1f %9.1f %9.1f" % (name, "%d x %d runs" % (len(qs), runs),
                                                      percentile(ts, 0.5), percentile(ts, 0.95),
                                                      min(ts), max(ts)))
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
