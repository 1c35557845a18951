#!/usr/bin/env python3
"""trail's watcher benchmark (issue 44): `trail index --watch` as the service runs it.

usage: python3 bench/watch.py [--corpus DIR] [--appends 30] [--idle 30] [--seed N] [--trail BIN]

Starts `trail --store S --home H index --watch` under a scratch home whose Claude Code projects
folder is DIR (a corpus from ../shared/bench/gen_claude_corpus.py, linked in; by default a small
one is generated), waits for the first index, then measures:

- idle CPU: the watcher's user+system CPU over --idle seconds with nothing changing (from
  /proc/PID/stat), as a share of one core;
- append to searchable: --appends times, one exchange (a prompt holding a word made fresh for
  it, an answer) is appended to a transcript drawn at random (--seed) from the corpus, and
  `trail search WORD` is run every 20 ms until it finds it; the time from the write to the first
  hit, p50 / p95 / max. A new file in a new project folder is the last case;
- resident memory: the watcher's VmRSS after the appends and its peak (VmHWM). The first full
  index runs before the watcher starts (as after a reboot the service finds an indexed store).

Appends are made to copies: the corpus itself is never written (the transcripts appended to are
copied into a project folder of the scratch home first).
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    return os.path.join(target, "release", "trail")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def memory_kib(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                k, v = line.split(":")
                out[k] = int(v.split()[0])
    return out


class Sampler(threading.Thread):
    """Polls the watcher's resident memory every 5 ms: the kernel keeps a peak of the whole
    (VmHWM) but not of its parts, and the parts differ in kind. Anonymous memory is the
    process's own (heap, stacks); file memory is pages of mapped files (the binary, and the
    store, which SQLite reads through a memory map): the kernel drops those first when memory
    is short, and they are shared with every other reader of the same files."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.phase, self.stop = pid, "start", False
        self.peak = {}  # phase -> (anon KiB, file KiB)

    def run(self):
        while not self.stop:
            try:
                m = memory_kib(self.pid)
            except OSError:
                return
            a, f = self.peak.get(self.phase, (0, 0))
            self.peak[self.phase] = (max(a, m.get("RssAnon", 0)), max(f, m.get("RssFile", 0)))
            time.sleep(0.005)


def exchange(session, word, n):
    """Two Claude Code records: a prompt holding `word` and an answer."""
    ts = "2026-11-27T12:00:%02d.000Z" % (n % 60)
    user = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/work/bench",
            "sessionId": session, "version": "2.1.14", "gitBranch": "main", "type": "user",
            "uuid": "bench-u-%d-%s" % (n, word), "timestamp": ts,
            "message": {"role": "user", "content": "please look at the %s module" % word}}
    answer = dict(user, type="assistant", uuid="bench-a-%d-%s" % (n, word), parentUuid=user["uuid"],
                  message={"id": "msg_bench_%d_%s" % (n, word), "type": "message", "role": "assistant",
                           "model": "claude-sonnet-4-5-20250929",
                           "content": [{"type": "text", "text": "looked at it"}],
                           "usage": {"input_tokens": 1, "output_tokens": 1}})
    return json.dumps(user) + "\n" + json.dumps(answer) + "\n"


def searchable(trail, base, word, limit=30.0):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        r = subprocess.run([trail] + base + ["search", word, "--json", "--limit", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return time.monotonic() - start
        time.sleep(0.02)
    return None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", help="a gen_claude_corpus.py output folder (its projects/)")
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--idle", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=None, help="default: fresh each run (printed)")
    ap.add_argument("--trail", help="the trail binary (default: build the release one)")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    trail = a.trail or build()
    tmp = tempfile.mkdtemp(prefix="trail-watch-bench-")
    home = os.path.join(tmp, "home")
    projects = os.path.join(home, ".claude", "projects")
    os.makedirs(projects)
    corpus = a.corpus
    if corpus is None:
        corpus = os.path.join(tmp, "corpus")
        subprocess.run([sys.executable, os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py"),
                        corpus, "--files", "200", "--total-mib", "64", "--seed", str(seed)], check=True,
                       stdout=subprocess.DEVNULL)
    src = os.path.join(corpus, "projects") if os.path.isdir(os.path.join(corpus, "projects")) else corpus
    files = []
    for d in sorted(os.listdir(src)):
        os.symlink(os.path.join(src, d), os.path.join(projects, d))
        files += [os.path.join(d, f) for f in sorted(os.listdir(os.path.join(src, d))) if f.endswith(".jsonl")]
    # Transcripts appended to are copies in a project of their own (the corpus stays as it is).
    own = os.path.join(projects, "-work-bench")
    os.makedirs(own)
    targets = []
    for rel in rng.sample(files, min(5, len(files))):
        dst = os.path.join(own, os.path.basename(rel))
        shutil.copyfile(os.path.join(src, rel), dst)
        targets.append(dst)
    store = os.path.join(tmp, "trail.db")
    base = ["--store", store, "--home", home, "--color", "never"]
    print(f"seed {seed}; corpus {corpus}: {len(files)} files; trail {trail}")

    # The first full index runs on its own (its peak memory is the index's, measured by run.py);
    # the watcher then starts on an indexed store, as the service does after a reboot.
    t0 = time.monotonic()
    subprocess.run([trail] + base + ["index"], check=True, stdout=subprocess.DEVNULL)
    print(f"full index {time.monotonic() - t0:.2f} s")
    t0 = time.monotonic()
    w = subprocess.Popen([trail] + base + ["index", "--watch"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    sampler = Sampler(w.pid)
    sampler.start()
    try:
        line = ""
        while not line.startswith("Watching"):
            line = w.stdout.readline()
            if not line:
                sys.exit("the watcher stopped before watching")
        print(f"watcher up in {time.monotonic() - t0:.2f} s: {line.strip()}")
        time.sleep(2)
        sampler.phase = "idle"
        c0 = cpu_seconds(w.pid)
        time.sleep(a.idle)
        idle = (cpu_seconds(w.pid) - c0) / a.idle
        print(f"idle CPU over {a.idle:.0f} s: {idle * 100:.3f} % of one core")

        sampler.phase = "appends"
        lat = []
        for n in range(a.appends):
            word = "zq%sx%d" % ("".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(6)), n)
            path = rng.choice(targets)
            session = os.path.basename(path)[:-len(".jsonl")]
            with open(path, "a") as f:
                f.write(exchange(session, word, n))
            took = searchable(trail, base, word)
            lat.append(took if took is not None else float("inf"))
            time.sleep(rng.uniform(0.2, 1.5))
        word = "zqnewfile%d" % seed
        newdir = os.path.join(projects, "-work-later-%d" % seed)
        os.makedirs(newdir)
        with open(os.path.join(newdir, "0000aaaa-0000-4000-8000-%012d.jsonl" % seed), "w") as f:
            f.write(exchange("0000aaaa-0000-4000-8000-%012d" % seed, word, 0))
        new_file = searchable(trail, base, word)
        mem = memory_kib(w.pid)
        print("append to searchable (%d appends): p50 %.3f s, p95 %.3f s, max %.3f s; over 2 s: %d"
              % (len(lat), pct(lat, 50), pct(lat, 95), max(lat), sum(1 for x in lat if x > 2)))
        print("a new file in a new project folder: %s" % ("%.3f s" % new_file if new_file else "NOT FOUND"))
        print("resident: %.1f MB now (anonymous %.1f, mapped files %.1f), peak %.1f MB"
              % (mem["VmRSS"] / 1024, mem["RssAnon"] / 1024, mem["RssFile"] / 1024, mem["VmHWM"] / 1024))
        for phase in ("start", "idle", "appends"):
            anon, file = sampler.peak.get(phase, (0, 0))
            print("  peak while %-7s anonymous %.1f MB, mapped files %.1f MB (5 ms samples)"
                  % (phase + ":", anon / 1024, file / 1024))
    finally:
        sampler.stop = True
        w.terminate()
        code = w.wait(timeout=30)
        print(f"SIGTERM: exit {code}")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
