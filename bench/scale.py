#!/usr/bin/env python3
"""trail at two sizes, in one sitting (issue 44): every figure the issue asks for, measured on a
1 GiB and a 10 GiB Claude Code corpus one after the other, so that they can be compared.

usage: python3 bench/scale.py --trail BIN --corpus 1g=DIR1 --corpus 10g=DIR2
                              [--seed N] [--search-rounds 3] [--skip-index STORE,STORE]

Each DIR is a ../shared/bench/gen_claude_corpus.py output (its projects/ folder), e.g.
`gen_claude_corpus.py DIR --files 20000 --total-mib 10240` for the 10 GiB one. Per corpus:

1. index: bench/run.py --corpus DIR --keep (full index: wall, CPU, peak RSS; no-change and
   one-append reindex, median and range of 5) — run.py's own lines are printed;
2. search: the 60-query known-item set (bench/relevance.py's class 1: three mid-frequency words
   of a prompt drawn at random, seeded) plus `the`, each a whole `trail search --json --limit 20`
   process, in --search-rounds rounds over the queries; p50 and p95 of each set, and the set's
   recall@10 (that the store answers what the words came from);
3. MCP: bench/mcp.py (search, get_session, file_history p50/p95 over a stdio client);
4. TUI: bench/tui.py (first frame, keystroke to redrawn results p50/p95, in tmux);
5. web: bench/web.py --duration 5 (time to first byte of the pages and APIs).

The seed of the queries is printed (fresh unless --seed). Corpora are only read (run.py
indexes a mirror of hard links). Nothing else should run on the machine meanwhile: the load
average is printed with each section.
"""
import argparse
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import relevance  # noqa: E402  (the known-item query classes)


def section(title):
    print("\n## %s (load %.1f)" % (title, os.getloadavg()[0]), flush=True)


def run_script(args):
    """Runs a bench script, echoing its output; returns the output."""
    out = subprocess.run([sys.executable] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, check=False).stdout
    sys.stdout.write(out)
    sys.stdout.flush()
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def known_item_queries(corpus, seed, n=60):
    prompts, answers, outputs = relevance.texts_of(corpus)
    pdf = relevance.doc_freq(prompts)
    adf = relevance.doc_freq(answers)
    rng = random.Random("%d-1" % seed)
    return relevance.class_queries(1, rng, n, prompts, answers, outputs, pdf, adf)


def timed_search(trail, store, words):
    t = time.perf_counter()
    out = subprocess.run([trail, "--store", store, "--color", "never", "search", "--json",
                          "--limit", "20", "--"] + list(words), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, check=False).stdout
    return time.perf_counter() - t, out


def search_figures(trail, store, queries, rounds):
    times, found = [], 0
    for r in range(rounds):
        for session, words in queries:
            took, out = timed_search(trail, store, words)
            times.append(took * 1e3)
            if r == 0 and session in out[:20000]:
                found += 1
    the = [timed_search(trail, store, ["the"])[0] * 1e3 for _ in range(max(20, rounds * 10))]
    print("%-34s %7s %9s %9s %9s" % ("queries", "runs", "p50 ms", "p95 ms", "max ms"))
    print("%-34s %7d %9.1f %9.1f %9.1f" % ("60 known-item (3 words of a prompt)", len(times),
                                           pct(times, 50), pct(times, 95), max(times)))
    print("%-34s %7d %9.1f %9.1f %9.1f" % ("`the`", len(the), pct(the, 50), pct(the, 95), max(the)))
    print("known-item hits in the top 20 (first round): %d of %d" % (found, len(queries)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trail", required=True)
    ap.add_argument("--corpus", action="append", required=True, metavar="NAME=DIR")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--search-rounds", type=int, default=3)
    ap.add_argument("--skip-index", help="NAME=STORE,...: use these stores, do not index")
    a = ap.parse_args()
    trail = os.path.abspath(a.trail)
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    skip = dict(x.split("=", 1) for x in a.skip_index.split(",")) if a.skip_index else {}
    print("trail %s; query seed %d" % (subprocess.run([trail, "--version"], stdout=subprocess.PIPE,
                                                      text=True).stdout.strip(), seed))
    for spec in a.corpus:
        name, corpus = spec.split("=", 1)
        print("\n# %s: %s" % (name, corpus), flush=True)
        if name in skip:
            store = skip[name]
        else:
            section("index")
            out = run_script([os.path.join(ROOT, "bench", "run.py"), "--corpus", corpus, "--keep",
                              "--trail", trail, "--relevance-size", "0"])
            store = [l.split(" at ", 1)[1].strip() for l in out.splitlines()
                     if l.startswith("store kept at")][-1]
        section("search, whole processes")
        search_figures(trail, store, known_item_queries(corpus, seed), a.search_rounds)
        section("MCP")
        run_script([os.path.join(ROOT, "bench", "mcp.py"), store, "--trail", trail])
        section("TUI")
        run_script([os.path.join(ROOT, "bench", "tui.py"), "--store", store, "--bin", trail])
        section("web")
        run_script([os.path.join(ROOT, "bench", "web.py"), "--store", store, "--trail", trail,
                    "--duration", "5", "--runs", "50"])
        print("store: %s" % store)


if __name__ == "__main__":
    sys.exit(main())
