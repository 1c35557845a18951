#!/usr/bin/env python3
"""trail tui's benchmark (issue 13), measured the way a person sees it: in a terminal (tmux).

usage: python3 bench/tui.py --store STORE [--bin PATH] [--runs 3]
       python3 bench/tui.py --total-mib 1024 [--corpus DIR]   # generate and index a store first

Measures, in a private tmux server (120x40 pane):
  * first frame: from starting `trail tui` until the screen shows the session list with its
    count (the first list query answered and drawn);
  * keystroke to redrawn results: each query of QUERIES typed one character at a time; for
    each key, the time from `tmux send-keys` until the screen shows the new text in the box and
    the answer drawn (the prompt says "searching…" until the answer for the newest keystroke
    is in). p50 and p95 over all keys of all runs;
  * peak RSS of the trail process (VmHWM) at the end, and how much of its resident set is its
    own memory (RssAnon) and how much mapped files (RssFile: the search database).
Screen polling uses `tmux capture-pane`, a process spawn each: figures include it, and the
script measures that cost alone (a key sent to `cat`). It then runs the in-process timing
(crates/trail-tui/examples/tui_bench.rs, next to the binary) on the same store and queries.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py")

# Typical queries: two common words, a word pair, a prefix, a filter with a word, a rare word.
QUERIES = ["error", "install error", "deploy*", "source:claude-code timeout", "aalways"]


def tmux(sock, *args, capture=False):
    r = subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", *args], check=True,
                       stdout=subprocess.PIPE if capture else subprocess.DEVNULL, text=True)
    return r.stdout if capture else None


def screen(sock):
    return tmux(sock, "capture-pane", "-p", "-t", "bench", capture=True)


def wait(sock, ok, timeout=30.0):
    start = time.perf_counter()
    while True:
        s = screen(sock)
        if ok(s):
            return time.perf_counter(), s
        if time.perf_counter() - start > timeout:
            raise SystemExit("timed out; the screen:\n" + s)
        time.sleep(0.001)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def one_run(trail, store, sock):
    home = tempfile.mkdtemp(prefix="trail-tui-home-")
    cmd = "exec env -i PATH=/usr/bin:/bin HOME=%s TERM=xterm-256color %s --store %s tui" % (
        home, trail, store)
    # The server and an idle window first, so the first frame does not count tmux's start.
    tmux(sock, "new-session", "-d", "-s", "idle", "-x", "120", "-y", "40", "sleep 600")
    t0 = time.perf_counter()
    tmux(sock, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "-c", home, cmd)
    t1, _ = wait(sock, lambda s: " sessions" in s.splitlines()[0] if s.strip() else False)
    first = t1 - t0
    pid = tmux(sock, "display-message", "-p", "-t", "bench", "#{pane_pid}", capture=True).strip()
    keys = []
    for q in QUERIES:
        typed = ""
        for c in q:
            typed += c
            t0 = time.perf_counter()
            tmux(sock, "send-keys", "-t", "bench", "-l", c)
            line0 = lambda s, typed=typed: s.splitlines()[0] if s.strip() else ""
            t1, _ = wait(sock, lambda s: ("❯ " + typed + "█") in line0(s) and "searching…" not in line0(s))
            keys.append(t1 - t0)
        tmux(sock, "send-keys", "-t", "bench", "C-u")
        wait(sock, lambda s: "❯ █" in s and "searching…" not in s.splitlines()[0])
    with open("/proc/%s/status" % pid) as f:
        status = dict(l.split(":", 1) for l in f if ":" in l)
    kb = lambda key: int(status[key].split()[0])
    # The peak, and at the end what of the resident set is the process's own memory and
    # what is mapped files (the search database, which readers map: clean pages the kernel
    # can take back).
    hwm = (kb("VmHWM"), kb("RssAnon"), kb("RssFile"))
    tmux(sock, "send-keys", "-t", "bench", "Escape")
    time.sleep(0.3)
    tmux(sock, "kill-server")
    shutil.rmtree(home, ignore_errors=True)
    return first, keys, hwm


def baseline(sock, n=40):
    """The harness's own cost: a key sent to `cat` until tmux's screen shows it."""
    tmux(sock, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "cat")
    times = []
    for i in range(n):
        c = "abcdefghij"[i % 10]
        seen = screen(sock).count(c)
        t0 = time.perf_counter()
        tmux(sock, "send-keys", "-t", "bench", "-l", c)
        t1, _ = wait(sock, lambda s: s.count(c) > seen)
        times.append(t1 - t0)
    tmux(sock, "kill-server")
    return times


def build_store(a):
    corpus = a.corpus or "/tmp/bench/c%dm" % a.total_mib
    if not os.path.isdir(corpus):
        subprocess.run([sys.executable, GEN, corpus, "--total-mib", str(a.total_mib)], check=True)
    store = os.path.join(os.path.dirname(corpus), os.path.basename(corpus) + "-tui.db")
    if not os.path.exists(store):
        subprocess.run([a.bin, "--store", store, "index", "--source", "claude-code", "--root",
                        "claude-code=%s" % os.path.join(corpus, "projects")], check=True)
    return store


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store")
    ap.add_argument("--total-mib", type=int, default=1024)
    ap.add_argument("--corpus")
    ap.add_argument("--bin")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    if not a.bin:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-tui", "--example", "tui_bench"],
                       cwd=ROOT, check=True)
        a.bin = os.path.join(target, "release", "trail")
    # The pane starts in a temporary home, so relative paths would name nothing there.
    a.bin = os.path.abspath(a.bin)
    store = os.path.abspath(a.store or build_store(a))
    size = os.path.getsize(store) / 2**20
    firsts, keys, rss = [], [], []
    for i in range(a.runs):
        f, k, m = one_run(a.bin, store, "trail-bench-%d-%d" % (os.getpid(), i))
        firsts.append(f)
        keys.extend(k)
        rss.append(m)
    print("store %s (%.0f MiB), binary %s, %d runs, %d keystrokes" % (
        store, size, a.bin, a.runs, len(keys)))
    print("first frame      median %.0f ms (runs: %s)" % (
        statistics.median(firsts) * 1e3, ", ".join("%.0f" % (x * 1e3) for x in firsts)))
    print("keystroke->draw  p50 %.0f ms  p95 %.0f ms  max %.0f ms" % (
        pct(keys, 50) * 1e3, pct(keys, 95) * 1e3, max(keys) * 1e3))
    peak = max(rss)
    print("peak RSS         %.0f MB (max of runs; at that run's end %.0f MB its own memory, "
          "%.0f MB mapped files)" % (peak[0] / 1024, peak[1] / 1024, peak[2] / 1024))
    exe = os.path.join(os.path.dirname(a.bin), "examples", "tui_bench")
    if os.path.exists(exe):
        subprocess.run([exe, store, str(a.runs)] + QUERIES, check=True)
    base = baseline("trail-bench-base-%d" % os.getpid())
    print("harness alone    p50 %.0f ms  p95 %.0f ms (a key to `cat`, tmux and polling only)" % (
        pct(base, 50) * 1e3, pct(base, 95) * 1e3))


if __name__ == "__main__":
    sys.exit(main())
