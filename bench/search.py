#!/usr/bin/env python3
"""trail's search benchmark: latency of `Store::search` on a big store, p50/p90 over N runs.

usage: python3 bench/search.py STORE [--runs 100]

STORE is a store built by `python3 bench/run.py --corpus DIR --keep` (it prints the path).
Runs crates/trail-store/examples/search_bench.rs in release mode: one process, the store
opened read-only, each query run --runs times after the previous ones (a warm page cache, as
for a user searching twice), 20 hits asked per search, snippets included.
"""
import argparse
import os
import subprocess
import sys

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
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
