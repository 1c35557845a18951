#!/usr/bin/env python3
"""Known-item relevance of `trail search`: can a person find the session a prompt of theirs
was in, from three words of it they remember?

usage: python3 bench/relevance.py --store STORE --corpus DIR [--queries 60] [--seed 12]
                                  [--trail PATH]

STORE is a store built from the Claude Code corpus DIR (`python3 bench/run.py --keep` prints
its path). The script reads every prompt of the corpus (user lines whose content is text),
counts in how many prompts each word appears, and calls mid-frequency the words found in
0.2% to 5% of the prompts (rarer words would make the task trivial, commoner ones are
stopwords). It then picks prompts at random (seeded) among those with at least three such
words, and for each runs `trail search --json --limit 10` with three of them, chosen at random.
The known item is the prompt's session: recall@10 is the share of queries that have it among
the 10 hits, MRR the mean of 1/rank of its first hit (0 when absent).
Each query runs in a fresh `trail` process, as a person's would; the median time is printed.
"""
import argparse
import collections
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What FTS5's unicode61 tokenizer calls a word, near enough for choosing query words.
WORD = re.compile(r"[^\W_]+", re.UNICODE)
LOW, HIGH = 0.002, 0.05


def prompts_of(corpus):
    """(session id, prompt text) of every typed prompt in the corpus' Claude Code files."""
    out = []
    for d, _, fs in os.walk(corpus):
        for f in sorted(fs):
            if not f.endswith(".jsonl"):
                continue
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                for line in fh:
                    # Cheap checks first: most lines are tool results and answers.
                    if '"type":"user"' not in line or '"tool_result"' in line:
                        continue
                    try:
                        o = json.loads(line)
                    except ValueError:
                        continue
                    c = o.get("message", {}).get("content")
                    if o.get("type") == "user" and isinstance(c, str) and o.get("sessionId"):
                        out.append((o["sessionId"], c))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--trail", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "trail"))
    a = ap.parse_args()
    prompts = prompts_of(a.corpus)
    df = collections.Counter()
    for _, text in prompts:
        df.update(set(w.lower() for w in WORD.findall(text)))
    lo, hi = LOW * len(prompts), HIGH * len(prompts)
    mid = lambda w: len(w) >= 3 and lo <= df[w] <= hi
    rng = random.Random(a.seed)
    queries = []
    candidates = list(range(len(prompts)))
    rng.shuffle(candidates)
    for i in candidates:
        if len(queries) == a.queries:
            break
        session, text = prompts[i]
        words = sorted(set(w.lower() for w in WORD.findall(text) if mid(w.lower())))
        if len(words) >= 3:
            queries.append((session, rng.sample(words, 3)))
    found, rr, times = 0, 0.0, []
    misses = []
    for session, words in queries:
        t = time.perf_counter()
        p = subprocess.run([a.trail, "--store", a.store, "--color", "never", "search", "--json",
                            "--limit", "10", "--"] + words,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - t)
        if p.returncode not in (0, 1):
            sys.exit("trail search failed: %s" % p.stderr)
        hits = json.loads(p.stdout) if p.stdout.strip() else []
        ranks = [i for i, h in enumerate(hits) if h["session_id"] == session]
        if ranks:
            found += 1
            rr += 1.0 / (ranks[0] + 1)
        else:
            misses.append(" ".join(words))
    n = len(queries)
    print("known-item search: %d prompts in the corpus, %d queries of 3 words found in %.1f%%-%.0f%% "
          "of prompts (seed %d)" % (len(prompts), n, LOW * 100, HIGH * 100, a.seed))
    print("recall@10 %.3f  MRR %.3f  (median %.1f ms a query, process start included)"
          % (found / n, rr / n, statistics.median(times) * 1e3))
    if misses:
        print("missed: " + "; ".join(misses[:10]))


if __name__ == "__main__":
    main()
