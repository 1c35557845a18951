#!/usr/bin/env python3
"""trail's benchmark: wall time and peak RSS of the index paths on a generated Claude Code corpus.

usage: python3 bench/run.py [--corpus DIR] [--total-mib N] [--keep] [--sources]

Generates the corpus with ../shared/bench/gen_claude_corpus.py when DIR does not exist yet,
builds the release binary, then measures, each in a fresh process:
  1. full index of the corpus into a new store
  2. reindex with no change
  3. reindex after appending one line to one ~40 MB file
and prints a table (also the store size against the corpus size). With --sources it then runs
bench/sources.py: every other line- and file-based source's index speed against Claude Code's.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py")


# The wrapper times only trail itself (a Python interpreter's start would add ~40 ms) and
# reports trail's own peak RSS.
WRAP = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)\n"
    "print('WALL_S=%f' % (time.perf_counter() - t), file=sys.stderr)\n"
    "sys.stdout.write(p.stdout)\n"
    "sys.stderr.write(p.stderr)\n"
    "print('MAXRSS_KB=%d' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)


def run(cmd, env):
    """Runs cmd in a fresh wrapper process; returns (seconds, peak RSS in MB, stdout)."""
    p = subprocess.run([sys.executable, "-c", WRAP] + cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    kb = [int(l.split("=")[1]) for l in p.stderr.splitlines() if l.startswith("MAXRSS_KB=")][-1]
    dt = [float(l.split("=")[1]) for l in p.stderr.splitlines() if l.startswith("WALL_S=")][-1]
    return dt, kb / 1024.0, p.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/tmp/trail-bench/corpus-1g")
    ap.add_argument("--total-mib", type=int, default=1024)
    ap.add_argument("--keep", action="store_true", help="keep the store for search/report benchmarks")
    ap.add_argument("--sources", action="store_true", help="then compare the other sources (bench/sources.py)")
    a = ap.parse_args()
    if not os.path.isdir(a.corpus):
        print("generating corpus in", a.corpus, file=sys.stderr)
        subprocess.run([sys.executable, GEN, a.corpus, "--total-mib", str(a.total_mib)], check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
    trail = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "trail")
    corpus_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(a.corpus) for f in fs)
    work = tempfile.mkdtemp(prefix="trail-bench-")
    # Work on a copy of the one file we append to, so the corpus stays as generated.
    store = os.path.join(work, "trail.db")
    env = dict(os.environ, TRAIL_STORE=store)
    index = [trail, "--color", "never", "index", "--source", "claude-code", "--root", "claude-code=" + a.corpus]
    rows = []
    dt, rss, out = run(index, env)
    rows.append(("full index", dt, rss, out))
    dt, rss, out = run(index, env)
    rows.append(("no-change reindex", dt, rss, out))
    # The biggest file is 20-50 MB; pick the one closest to 40 MB.
    files = [os.path.join(d, f) for d, _, fs in os.walk(a.corpus) for f in fs if f.endswith(".jsonl")]
    target = min(files, key=lambda p: abs(os.path.getsize(p) - 40e6))
    backup = os.path.join(work, "backup.jsonl")
    shutil.copyfile(target, backup)
    try:
        with open(target, "a") as f:
            f.write('{"type":"user","uuid":"bench-append-1","parentUuid":null,"sessionId":"x","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"one more line"}}\n')
        dt, rss, out = run(index, env)
        rows.append(("append one line to a %.0f MB file" % (os.path.getsize(target) / 1e6), dt, rss, out))
    finally:
        shutil.copyfile(backup, target)
    store_bytes = sum(os.path.getsize(store + s) for s in ("", "-wal") if os.path.exists(store + s))
    print("corpus: %s, %.1f MiB in %d files" % (a.corpus, corpus_bytes / 2**20, len(files)))
    print("%-40s %10s %14s" % ("step", "wall", "peak RSS"))
    for name, dt, rss, _ in rows:
        print("%-40s %9.3fs %11.0f MB" % (name, dt, rss))
    print("store size: %.1f MiB (%.2fx the corpus)" % (store_bytes / 2**20, store_bytes / corpus_bytes))
    for name, _, _, out in rows:
        print("  %s: %s" % (name, out.splitlines()[0] if out else ""))
    if a.keep:
        print("store kept at", store)
    else:
        shutil.rmtree(work)
    if a.sources:
        print()
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "sources.py")], check=True)


if __name__ == "__main__":
    main()
