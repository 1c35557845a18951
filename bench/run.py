#!/usr/bin/env python3
"""trail's index benchmark: wall time, CPU time over wall, peak RSS and store size of a full
index, a no-change reindex and a one-line append, on generated Claude Code corpora; then the
known-item relevance benchmark (bench/relevance.py) on the store of one size.

usage: python3 bench/run.py [--sizes 100,1024,3072] [--corpus-dir DIR] [--corpus DIR]
                            [--relevance-size 1024] [--keep] [--sources]

Each size N (MiB) uses the corpus DIR/corpus-Nm, generated with
../shared/bench/gen_claude_corpus.py when missing (100 MiB: 200 files, 1 large; 1 GiB: 2,000
files, 10 of 20-50 MB; 3 GiB: 6,000 files, 30 large). --corpus indexes one existing corpus
instead. Corpora are only read: the index runs over a mirror of hard links (symbolic links
when the corpus is on another file system), in which the file appended to (the one closest to
40 MB) is a copy. Hard links because an agent's files are plain files: following a symbolic
link costs every look at a file a second path walk (on the 1 GiB corpus a no-change run took
34 ms over symbolic links, 24 ms over hard links; `perf stat -r 10`).

Every step runs in a fresh process, wrapped so that its wall time, CPU time (user + system)
and peak RSS are trail's own:
  1. full index into a new store
  2. reindex with no change
  3. reindex after appending one prompt (of the file's own session, after its last entry) to the ~40 MB file
The store's size counts every file of it: the store, the search database beside it
(`-search`) and their WAL files. The load average is printed with each figure: on a shared
machine wall time is noisy, CPU time much less.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py")

# Generator arguments per size: a 100 MiB corpus with the 1 GiB corpus' 10 large files would be
# nothing but those files (the others come out empty).
SHAPES = {100: ["--files", "200", "--large", "1"],
          1024: ["--files", "2000", "--large", "10"],
          3072: ["--files", "6000", "--large", "30"]}

# The wrapper times only trail itself (a Python interpreter's start would add ~40 ms) and
# reports trail's own CPU time and peak RSS.
WRAP = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)\n"
    "print('WALL_S=%f' % (time.perf_counter() - t), file=sys.stderr)\n"
    "sys.stdout.write(p.stdout)\n"
    "sys.stderr.write(p.stderr)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print('CPU_S=%f' % (u.ru_utime + u.ru_stime), file=sys.stderr)\n"
    "print('MAXRSS_KB=%d' % u.ru_maxrss, file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)


def run(cmd, env):
    """Runs cmd in a fresh wrapper process; returns (wall s, CPU s, peak RSS MB, stdout)."""
    p = subprocess.run([sys.executable, "-c", WRAP] + cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    val = lambda key: [float(l.split("=")[1]) for l in p.stderr.splitlines() if l.startswith(key + "=")][-1]
    return val("WALL_S"), val("CPU_S"), val("MAXRSS_KB") / 1024.0, p.stdout.strip()


def load():
    return os.getloadavg()[0]


def jsonl_files(corpus):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs if f.endswith(".jsonl"))


def mirror(corpus, dest, copy):
    """Links every file of corpus into dest (same layout); `copy` is copied instead."""
    for path in jsonl_files(corpus):
        rel = os.path.relpath(path, corpus)
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if path == copy:
            shutil.copyfile(path, out)
        else:
            try:
                os.link(path, out)
            except OSError:
                os.symlink(os.path.abspath(path), out)
    return os.path.join(dest, os.path.relpath(copy, corpus))


def next_prompt(path):
    """A user prompt that goes on from the file's last entry, as Claude Code appends it: the
    file's own session id (an entry with another one is a replay of that session, which the
    parser skips, so nothing would be written) and the last entry as its parent."""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (1 << 20)))
        last = json.loads(f.read().splitlines()[-1])
    return json.dumps({
        "type": "user", "uuid": "bench-append-1", "parentUuid": last.get("uuid"),
        "sessionId": os.path.splitext(os.path.basename(path))[0], "cwd": last.get("cwd"),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {"role": "user", "content": "one more line about the append benchmark"},
    })


def store_bytes(store):
    return sum(os.path.getsize(store + s) for s in ("", "-wal", "-search", "-search-wal")
               if os.path.exists(store + s))


def bench_corpus(trail, corpus, keep):
    files = jsonl_files(corpus)
    corpus_bytes = sum(os.path.getsize(p) for p in files)
    target = min(files, key=lambda p: abs(os.path.getsize(p) - 40e6))
    work = tempfile.mkdtemp(prefix="trail-bench-")
    root = os.path.join(work, "corpus")
    appended = mirror(corpus, root, target)
    store = os.path.join(work, "trail.db")
    env = dict(os.environ, TRAIL_STORE=store)
    index = [trail, "--color", "never", "index", "--source", "claude-code", "--root", "claude-code=" + root]
    rows = []
    for name in ("full index", "no-change reindex"):
        before = load()
        dt, cpu, rss, out = run(index, env)
        rows.append((name, dt, cpu, rss, before, out))
    with open(appended, "a") as f:
        f.write(next_prompt(appended) + "\n")
    before = load()
    dt, cpu, rss, out = run(index, env)
    rows.append(("append one line to a %.0f MB file" % (os.path.getsize(appended) / 1e6), dt, cpu, rss, before, out))
    size = store_bytes(store)
    print("corpus: %s, %.1f MiB in %d files" % (corpus, corpus_bytes / 2**20, len(files)))
    print("%-36s %9s %9s %8s %9s %6s" % ("step", "wall", "CPU", "CPU/wall", "peak RSS", "load"))
    for name, dt, cpu, rss, before, _ in rows:
        print("%-36s %8.3fs %8.2fs %8.2f %6.0f MB %6.1f" % (name, dt, cpu, cpu / dt if dt else 0, rss, before))
    print("store size: %.1f MiB (%.3fx the corpus), of which the search database %.1f MiB"
          % (size / 2**20, size / corpus_bytes,
             sum(os.path.getsize(store + s) for s in ("-search", "-search-wal") if os.path.exists(store + s)) / 2**20))
    for name, _, _, _, _, out in rows:
        print("  %s: %s" % (name, out.splitlines()[0] if out else ""))
    if keep:
        print("store kept at", store)
    else:
        shutil.rmtree(work)
    return rows[0][1], store if keep else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,1024,3072", help="corpus sizes in MiB")
    ap.add_argument("--corpus-dir", default="/tmp/trail-bench", help="where corpus-<N>m folders are (or go)")
    ap.add_argument("--corpus", help="index this corpus only")
    ap.add_argument("--relevance-size", type=int, default=1024,
                    help="run bench/relevance.py on this size's store (0: not at all)")
    ap.add_argument("--queries", type=int, default=60, help="known-item queries")
    ap.add_argument("--seed", type=int, default=12, help="seed of the known-item queries")
    ap.add_argument("--keep", action="store_true", help="keep the stores (search/report benchmarks)")
    ap.add_argument("--sources", action="store_true", help="then compare the other sources (bench/sources.py)")
    ap.add_argument("--trail", help="a trail binary to measure (default: build the release binary)")
    a = ap.parse_args()
    if a.trail:
        trail = os.path.abspath(a.trail)
    else:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        trail = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "trail")
    if a.corpus:
        corpora = [(None, a.corpus)]
    else:
        corpora = []
        for n in [int(x) for x in a.sizes.split(",") if x]:
            path = os.path.join(a.corpus_dir, "corpus-%dm" % n)
            if not os.path.isdir(path):
                print("generating corpus in", path, file=sys.stderr)
                shape = SHAPES.get(n, ["--files", str(max(20, 2 * n)), "--large", str(max(1, n // 100))])
                subprocess.run([sys.executable, GEN, path, "--total-mib", str(n)] + shape, check=True)
            corpora.append((n, path))
    walls = {}
    for n, corpus in corpora:
        keep = a.keep or (n is not None and n == a.relevance_size) or (n is None and a.relevance_size)
        wall, store = bench_corpus(trail, corpus, keep)
        walls[n] = wall
        if store and a.relevance_size:
            print()
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "relevance.py"), "--store", store,
                            "--corpus", corpus, "--trail", trail, "--queries", str(a.queries),
                            "--seed", str(a.seed)], check=True)
            if not a.keep:
                shutil.rmtree(os.path.dirname(store))
        print()
    if 1024 in walls and 3072 in walls:
        print("3 GiB / 1 GiB full index time: %.2fx (target <= 3.1x)" % (walls[3072] / walls[1024]))
    if a.sources:
        print()
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "sources.py")], check=True)


if __name__ == "__main__":
    main()
