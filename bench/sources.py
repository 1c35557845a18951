#!/usr/bin/env python3
"""Index speed of every line- and file-based source against Claude Code's, in MB/s.

usage: python3 bench/sources.py [--work DIR] [--mib N] [--runs N]

Generates (once, under --work) a Claude Code corpus of about N MiB without giant files
(../shared/bench/gen_claude_corpus.py --files 400 --large 0) and, by scaling the shared
corpus's real files (bench/gen_sources.py), 1,000 VS Code chat sessions, one N MiB Copilot CLI
events.jsonl, one N MiB Codex rollout, N MiB of Gemini CLI chats, N MiB of Aider chat
histories in 40 projects, an N MiB Claude Code history.jsonl and N MiB of VS Code workspace
databases holding older Copilot Chat sessions, and N MiB of Cline tasks. Each is indexed into a new
store by the release binary; the table gives wall time, CPU time (user + sys), MiB per wall
second and per CPU second, the ratio to Claude Code's, and peak RSS. Each source is indexed
--runs times (default 3), interleaved, into a new store each time; the table gives the median
wall and CPU times and the largest peak RSS. CPU MiB/s is the figure to compare on a busy
machine: wall time also measures what else runs.
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRAP = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "dt = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print('%f %f %d %d' % (dt, u.ru_utime + u.ru_stime, u.ru_maxrss, p.returncode))\n"
)


def size_of(d):
    return sum(os.path.getsize(os.path.join(a, f)) for a, _, fs in os.walk(d) for f in fs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/trail-bench/sources")
    ap.add_argument("--mib", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", help="comma-separated labels to run besides claude-code (e.g. aider,claude-history)")
    ap.add_argument("--trail", default="", help="a release trail binary (default: build one)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    gen = os.path.join(ROOT, "bench", "gen_sources.py")
    # (label, source, generated format, root under --work)
    cases = [
        ("claude-code", "claude-code", "claude", "claude"),
        ("copilot-vscode", "copilot-vscode", "vscode", "vscode/Code"),
        ("copilot-cli", "copilot-cli", "copilot", "copilot/.copilot"),
        ("codex", "codex", "codex", "codex/.codex"),
        ("gemini-cli", "gemini-cli", "gemini", "gemini/.gemini"),
        ("aider", "aider", "aider", "aider/projects"),
        ("claude-history", "claude-history", "claude-history", "claude-history/.claude"),
        ("vscode-legacy", "copilot-vscode", "vscode-legacy", "vscode-legacy/Code"),
        ("cline", "cline", "cline", "cline/Code"),
    ]
    if a.only:
        cases = [c for c in cases if c[0] == "claude-code" or c[0] in a.only.split(",")]
    for _, _, fmt, _ in cases:
        out = os.path.join(a.work, fmt)
        if os.path.isdir(out):
            continue
        if fmt == "claude":
            cmd = [sys.executable, os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py"), out,
                   "--files", "400", "--large", "0", "--total-mib", str(a.mib)]
        else:
            cmd = [sys.executable, gen, out, fmt, "--mib", str(a.mib)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    if a.trail:
        trail = a.trail
    else:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        trail = os.path.join(target, "release", "trail")
    samples = {label: [] for label, _, _, _ in cases}
    # Interleaved, so a slow spell of the machine lands on every source rather than one.
    for _ in range(a.runs):
        for label, source, fmt, root in cases:
            store = os.path.join(a.work, fmt + ".db")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(store + suffix):
                    os.remove(store + suffix)
            p = subprocess.run([sys.executable, "-c", WRAP, trail, "--store", store, "index", "--source", source,
                                "--root", "%s=%s" % (source, os.path.join(a.work, root))],
                               capture_output=True, text=True, check=True)
            wall, cpu, rss_kb, code = p.stdout.split()
            if code != "0":
                sys.exit("%s: trail index failed" % source)
            samples[label].append((float(wall), float(cpu), int(rss_kb) / 1024))
    rows = []
    for label, _, fmt, _ in cases:
        runs = samples[label]
        mib = size_of(os.path.join(a.work, fmt)) / 2**20
        rows.append((label, mib, statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
                     max(r[2] for r in runs)))
    base_wall = rows[0][1] / rows[0][2]
    base_cpu = rows[0][1] / rows[0][3]
    print("%-15s %8s %8s %8s %10s %10s %7s %7s %9s" % ("source", "MiB", "wall s", "cpu s", "MiB/s", "MiB/cpu-s",
                                                      "wall %", "cpu %", "peak RSS"))
    for source, mib, wall, cpu, rss in rows:
        print("%-15s %8.1f %8.2f %8.2f %10.1f %10.1f %6.0f%% %6.0f%% %6.0f MB" % (
            source, mib, wall, cpu, mib / wall, mib / cpu, 100 * mib / wall / base_wall,
            100 * mib / cpu / base_cpu, rss))


if __name__ == "__main__":
    main()
