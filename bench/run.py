#!/usr/bin/env python3
"""trail's index benchmark: wall time, CPU time over wall, peak RSS and store size of a full
index, a no-change reindex and a one-line append, on generated Claude Code corpora; then the
known-item relevance benchmark (bench/relevance.py) on the store of one size.

usage: python3 bench/run.py [--sizes 100,1024,3072] [--corpus-dir DIR] [--corpus DIR]
                            [--repeat N] [--small-runs N] [--relevance-size 1024] [--keep]
                            [--sources]

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
  1. full index into a new store (--repeat N: N of them per size, in rounds over the sizes so
     that a slow spell of a shared machine falls on every size; each is printed, then the
     median, and the 3 GiB / 1 GiB ratio is that of the medians)
  2. reindex with no change (on the last full index's store), --small-runs N times (5)
  3. reindex after appending one prompt (of the file's own session, after its last entry) to
     the ~40 MB file, N times, one more prompt each time
  Steps 2 and 3 print the median and the range of their N runs: one run of a 70 ms step on a
  shared machine was once 138 ms, and nine more of it 58-104 ms.
Before the first round, every .jsonl file of every corpus is read once, untimed, so that the first
round finds the corpora in the page cache as the later ones do (this machine's kernel evicts file
pages left unread for a minute; a cold 1 GiB corpus cost 2.6 s more to index).
The 3 GiB / 1 GiB line also gives the ratio of user and of system CPU time: on this machine the
kernel's copy of written data into page cache it has not used before costs several times more
per byte past the first gigabyte (BENCHMARKS.md, "2026-11-27, noon"), which shows in system time
only.
The store's size counts every file of it: the store, the search database beside it
(`-search`) and their WAL files. The load average is printed with each figure, and with each
full index the core-seconds the hypervisor gave other guests meanwhile (`steal` in /proc/stat,
machine-wide): on a shared machine wall time is noisy, and stolen time is wall time in which
trail could not run. Before each step the kernel is let write back what the step before left
dirty (`sync`), so that a step is not timed while the previous one's writes are still flushed.
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
    "print('SYS_S=%f' % u.ru_stime, file=sys.stderr)\n"
    "print('MAXRSS_KB=%d' % u.ru_maxrss, file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)


def run(cmd, env):
    """Runs cmd in a fresh wrapper process; returns (wall s, CPU s, peak RSS MB, stdout, system
    CPU s)."""
    p = subprocess.run([sys.executable, "-c", WRAP] + cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    val = lambda key: [float(l.split("=")[1]) for l in p.stderr.splitlines() if l.startswith(key + "=")][-1]
    return val("WALL_S"), val("CPU_S"), val("MAXRSS_KB") / 1024.0, p.stdout.strip(), val("SYS_S")


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


def next_prompt(path, n):
    """A user prompt that goes on from the file's last entry, as Claude Code appends it: the
    file's own session id (an entry with another one is a replay of that session, which the
    parser skips, so nothing would be written) and the last entry as its parent."""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (1 << 20)))
        last = json.loads(f.read().splitlines()[-1])
    return json.dumps({
        "type": "user", "uuid": "bench-append-%d" % n, "parentUuid": last.get("uuid"),
        "sessionId": os.path.splitext(os.path.basename(path))[0], "cwd": last.get("cwd"),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {"role": "user", "content": "one more line about the append benchmark"},
    })


def store_bytes(store):
    return sum(os.path.getsize(store + s) for s in ("", "-wal", "-search", "-search-wal")
               if os.path.exists(store + s))


def quiesce():
    """Lets the kernel write back what the previous step left dirty before the next is timed: a
    full index leaves up to a gigabyte of dirty pages, and the writeback that follows took CPU
    from the step after it (an append right after a 1 GiB index took 117 ms, 50-70 ms once the
    writeback was done)."""
    os.sync()


def stolen():
    """Core-seconds the hypervisor gave other guests, machine-wide (/proc/stat's steal)."""
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


class Corpus:
    """One corpus under measure: its hard-link mirror, and the store of its last full index."""

    def __init__(self, trail, size, path):
        self.size, self.path = size, path
        files = jsonl_files(path)
        self.paths = files  # the .jsonl files indexed, for the warm-up
        self.files = len(files)
        self.bytes = sum(os.path.getsize(p) for p in files)
        target = min(files, key=lambda p: abs(os.path.getsize(p) - 40e6))
        self.work = tempfile.mkdtemp(prefix="trail-bench-")
        root = os.path.join(self.work, "corpus")
        self.appended = mirror(path, root, target)
        self.store = os.path.join(self.work, "trail.db")
        self.env = dict(os.environ, TRAIL_STORE=self.store)
        self.index = [trail, "--color", "never", "index", "--source", "claude-code", "--root",
                      "claude-code=" + root]
        self.full = []  # (wall, CPU, RSS, load, stolen core-seconds, first output line, system CPU)

    def warm(self):
        """Reads every .jsonl file of the corpus once, untimed, so that the first round finds it
        in the page cache like the others: this machine's kernel evicts file pages left unread for a
        minute (a DAMON "pageout" scheme), and in one pair each a cold 1 GiB corpus took 10.1 s
        to index against 7.4 s warm, the 3 GiB one 29.4 s against 23.2 s."""
        t = time.perf_counter()
        for path in self.paths:
            with open(path, "rb") as f:
                while f.read(1 << 20):
                    pass
        return time.perf_counter() - t

    def full_index(self):
        """A full index into a new store (the one before is removed first)."""
        for suffix in ("", "-wal", "-shm", "-search", "-search-wal", "-search-shm"):
            if os.path.exists(self.store + suffix):
                os.remove(self.store + suffix)
        quiesce()
        before, steal = load(), stolen()
        dt, cpu, rss, out, sys_cpu = run(self.index, self.env)
        self.full.append((dt, cpu, rss, before, stolen() - steal, out.splitlines()[0] if out else "",
                          sys_cpu))

    def timed_index(self):
        """One index run on the store as it is: (wall s, CPU s, peak RSS MB, load before, stdout)."""
        quiesce()
        before = load()
        dt, cpu, rss, out, _ = run(self.index, self.env)
        return dt, cpu, rss, before, out

    def report(self, small_runs):
        """Prints every full index, then no-change reindexes and appends on the last store:
        `small_runs` of each (no-change ones first), their median and range."""
        steps = [("no-change reindex", [self.timed_index() for _ in range(small_runs)])]
        runs = []
        for n in range(1, small_runs + 1):
            with open(self.appended, "a") as f:
                f.write(next_prompt(self.appended, n) + "\n")
            runs.append(self.timed_index())
        steps.append(("append one line to a %.0f MB file" % (os.path.getsize(self.appended) / 1e6), runs))
        size = store_bytes(self.store)
        print("corpus: %s, %.1f MiB in %d files" % (self.path, self.bytes / 2**20, self.files))
        print("%-36s %9s %9s %8s %9s %6s %7s %7s" % ("step", "wall", "CPU", "CPU/wall", "peak RSS", "load", "stolen",
                                                     "system"))
        for i, (dt, cpu, rss, before, steal, _, sys_cpu) in enumerate(self.full):
            name = "full index" if len(self.full) == 1 else "full index, run %d" % (i + 1)
            print("%-36s %8.3fs %8.2fs %8.2f %6.0f MB %6.1f %6.2fs %6.2fs" % (
                name, dt, cpu, cpu / dt, rss, before, steal, sys_cpu))
        if len(self.full) > 1:
            print("%-36s %8.3fs %8.2fs %8.2f %6.0f MB" % (
                "full index, median of %d" % len(self.full), self.wall(),
                median([f[1] for f in self.full]), median([f[1] / f[0] for f in self.full]),
                median([f[2] for f in self.full])))
        for name, runs in steps:
            dt, cpu, rss = (median([r[i] for r in runs]) for i in range(3))
            walls = sorted(r[0] for r in runs)
            spread = "" if len(runs) == 1 else "  (median of %d, %.3f-%.3f s)" % (len(runs), walls[0], walls[-1])
            print("%-36s %8.3fs %8.2fs %8.2f %6.0f MB %6.1f%s" % (
                name, dt, cpu, cpu / dt if dt else 0, rss, runs[0][3], spread))
        print("store size: %.1f MiB (%.3fx the corpus), of which the search database %.1f MiB"
              % (size / 2**20, size / self.bytes,
                 sum(os.path.getsize(self.store + s) for s in ("-search", "-search-wal")
                     if os.path.exists(self.store + s)) / 2**20))
        print("  full index: %s" % self.full[-1][5])
        for name, runs in steps:
            out = runs[-1][4]
            print("  %s: %s" % (name, out.splitlines()[0] if out else ""))

    def wall(self):
        return median([f[0] for f in self.full])

    def close(self):
        shutil.rmtree(self.work)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,1024,3072", help="corpus sizes in MiB")
    ap.add_argument("--corpus-dir", default="/tmp/trail-bench", help="where corpus-<N>m folders are (or go)")
    ap.add_argument("--corpus", help="index this corpus only")
    ap.add_argument("--repeat", type=int, default=1,
                    help="full indexes per size, in rounds over the sizes (medians are reported)")
    ap.add_argument("--relevance-size", type=int, default=1024,
                    help="run bench/relevance.py on this size's store (0: not at all)")
    ap.add_argument("--queries", type=int, default=60, help="known-item queries")
    ap.add_argument("--seed", type=int, default=12, help="seed of the known-item queries")
    ap.add_argument("--small-runs", type=int, default=5,
                    help="no-change reindexes and one-line appends per size (median and range)")
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
        paths = [(None, a.corpus)]
    else:
        paths = []
        for n in [int(x) for x in a.sizes.split(",") if x]:
            path = os.path.join(a.corpus_dir, "corpus-%dm" % n)
            if not os.path.isdir(path):
                print("generating corpus in", path, file=sys.stderr)
                shape = SHAPES.get(n, ["--files", str(max(20, 2 * n)), "--large", str(max(1, n // 100))])
                subprocess.run([sys.executable, GEN, path, "--total-mib", str(n)] + shape, check=True)
            paths.append((n, path))
    corpora = [Corpus(trail, n, path) for n, path in paths]
    for c in corpora:
        print("page cache warmed with %s in %.1f s (untimed)" % (c.path, c.warm()), file=sys.stderr)
    # Rounds over the sizes, so that a slow spell of a shared machine falls on every size
    # rather than on one.
    for _ in range(max(1, a.repeat)):
        for c in corpora:
            c.full_index()
    for c in corpora:
        c.report(max(1, a.small_runs))
        relevance = (c.size == a.relevance_size) if c.size is not None else bool(a.relevance_size)
        if relevance and a.relevance_size:
            print()
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "relevance.py"), "--store", c.store,
                            "--corpus", c.path, "--trail", trail, "--queries", str(a.queries),
                            "--seed", str(a.seed)], check=True)
        if a.keep:
            print("store kept at", c.store)
        else:
            c.close()
        print()
    by_size = {c.size: c for c in corpora}
    if 1024 in by_size and 3072 in by_size:
        small, large = by_size[1024].full, by_size[3072].full
        rounds = ", ".join("%.2fx" % (l[0] / s[0]) for s, l in zip(small, large))
        cpu = lambda runs: median([r[1] for r in runs])
        user = lambda runs: median([r[1] - r[6] for r in runs])
        system = lambda runs: median([r[6] for r in runs])
        print("3 GiB / 1 GiB full index time: %.2fx (target <= 3.1x)%s; CPU time %.2fx "
              "(user %.2fx, system %.2fx)" % (
                  by_size[3072].wall() / by_size[1024].wall(),
                  "; medians, by round: " + rounds if len(small) > 1 else "", cpu(large) / cpu(small),
                  user(large) / user(small), system(large) / system(small)))
    if a.sources:
        print()
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "sources.py")], check=True)


if __name__ == "__main__":
    main()
