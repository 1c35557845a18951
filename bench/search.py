#!/usr/bin/env python3
"""trail's search benchmark: latency of `Store::search` on a big store, p50/p90 over N runs.

usage: python3 bench/search.py STORE [--runs 100]
       python3 bench/search.py STORE --process TRAIL [--process OTHER ...] [--runs 30]
                               [--known-item CORPUS [--seed N]]

STORE is a store built by `python3 bench/run.py --corpus DIR --keep` (it prints the path).
Runs crates/trail-store/examples/search_bench.rs in release mode: one process, the store
opened read-only, each query run --runs times after the previous ones (a warm page cache, as
for a user searching twice), 20 hits asked per search, snippets included.
With --process, times whole processes instead (what a person waits for): the binary TRAIL runs
`search --json --limit 20 QUERY` --runs times per query, in rounds over the queries, and p50,
p95, the range and the CPU time's p50 are printed per query, then per class of queries, every
run of its queries pooled (with several --process binaries, each query runs on each in turn,
the order alternating per round, for an A/B in one sitting; one untimed round warms the page
cache first): "two words" (eight two-word
ANDs of the corpus' common words, `install error` among them) and "the" (issue 43's targets:
whole-process p50 at most 10 ms for two words, 50 ms for `the`). --known-item CORPUS adds
issue 44's class: the 60 known-item queries (three mid-frequency words of a prompt, as
bench/scale.py draws them) from the corpus the store was indexed from, with a fresh seed unless
--seed names one.
"""
import argparse
import os
import random
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


def known_item_queries(corpus, seed, n=60):
    """bench/relevance.py's class 1: three mid-frequency words of a prompt, as scale.py draws
    them."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import relevance
    prompts, answers, outputs = relevance.texts_of(corpus)
    pdf, adf = relevance.doc_freq(prompts), relevance.doc_freq(answers)
    rng = random.Random("%d-1" % seed)
    return [words for _, words in
            relevance.class_queries(1, rng, n, prompts, answers, outputs, pdf, adf)]


def percentile(ts, p):
    ts = sorted(ts)
    return ts[min(int(len(ts) * p), len(ts) - 1)]


def timed(trail, store, q):
    """Wall and CPU time (ms) of one whole `trail search` process."""
    t = time.perf_counter()
    p = subprocess.Popen([trail, "--store", store, "--color", "never", "search", "--json",
                          "--limit", "20", "--", q], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(p.pid, 0)
    return (time.perf_counter() - t) * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def whole_process(trails, store, runs, classes):
    """p50, p95, min and max (ms) of whole `trail search` processes, per query, then per
    class (every run of the class's queries). With several binaries, each query runs on each
    in turn, in an order that alternates from round to round (the machine's slow and fast
    spells fall on all of them alike), and each gets its tables."""
    queries = [q for _, q in QUERIES] + [q for _, qs in classes for q in qs]
    queries = list(dict.fromkeys(queries))
    times = {b: {q: [] for q in queries} for b in trails}
    cpu = {b: {q: [] for q in queries} for b in trails}
    # One untimed round first: the first binary to read a page would pay for the others.
    for q in queries:
        for b in trails:
            timed(b, store, q)
    for r in range(runs):
        for q in queries:
            for b in (trails if r % 2 == 0 else trails[::-1]):
                wall, used = timed(b, store, q)
                times[b][q].append(wall)
                cpu[b][q].append(used)
    for b in trails:
        if len(trails) > 1:
            print("== %s" % b)
        report(times[b], cpu[b], runs, classes)
    print("load average at the end: %.1f" % os.getloadavg()[0])


def report(times, cpu, runs, classes):
    line = "%-14s %-34s %9s %9s %9s %9s %9s"
    print(line % ("kind", "query", "p50 ms", "p95 ms", "min", "max", "CPU p50"))
    row = "%-14s %-34s %9.1f %9.1f %9.1f %9.1f %9.1f"
    for kind, q in QUERIES:
        ts = times[q]
        print(row % (kind, q, percentile(ts, 0.5), percentile(ts, 0.95), min(ts), max(ts),
                     percentile(cpu[q], 0.5)))
    print(line % ("class", "queries", "p50 ms", "p95 ms", "min", "max", "CPU p50"))
    for name, qs in classes:
        ts = [t for q in qs for t in times[q]]
        cs = [c for q in qs for c in cpu[q]]
        print(row % (name, "%d x %d runs" % (len(qs), runs), percentile(ts, 0.5),
                     percentile(ts, 0.95), min(ts), max(ts), percentile(cs, 0.5)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--process", metavar="TRAIL", action="append",
                    help="time whole processes of this binary (twice or more: A/B, alternating)")
    ap.add_argument("--known-item", metavar="CORPUS",
                    help="with --process, add the 60-query known-item class (bench/relevance.py's "
                         "class 1) drawn from the corpus the store was indexed from")
    ap.add_argument("--seed", type=int, default=None,
                    help="the known-item queries' seed (default: a fresh one, printed)")
    a = ap.parse_args()
    if a.process:
        classes = list(CLASSES)
        if a.known_item:
            seed = a.seed if a.seed is not None else random.randrange(1 << 30)
            print("known-item queries: seed %d" % seed)
            queries = known_item_queries(a.known_item, seed)
            classes.append(("known-item", [" ".join(words) for words in queries]))
        return whole_process(a.process, a.store, a.runs, classes)
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
