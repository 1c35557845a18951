#!/usr/bin/env python3
"""Benchmark of the reports (issue 5): `trail usage | standup | tips | improve` on a kept store,
and ccusage on the same corpus, with a check that both give the same totals.

usage: python3 bench/reports.py --store STORE [--corpus DIR] [--trail BIN] [--runs N]

STORE is the store `python3 bench/run.py --corpus DIR --keep` printed. Each command runs in a
fresh process N times (after one untimed warm-up run, which also applies pending migrations);
the table shows the median and the fastest wall time. ccusage (`npm install -g ccusage@20.0.24`)
runs as `CLAUDE_CONFIG_DIR=DIR ccusage daily --json --offline` with TZ=UTC; its totals are
compared with `trail usage --json`.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env, runs):
    times = []
    out = ""
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - t)
        if p.returncode != 0:
            sys.exit("command failed: %s\n%s" % (" ".join(cmd), p.stderr))
        out = p.stdout
    return statistics.median(times), min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--corpus", default="/tmp/bench/c1g")
    ap.add_argument("--trail", help="trail binary (default: build target/release/trail)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ccusage-runs", type=int, default=3)
    a = ap.parse_args()
    trail = a.trail
    if not trail:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        trail = os.path.join(ROOT, "target", "release", "trail")
    env = dict(os.environ, TZ="UTC", NO_COLOR="1")
    base = [trail, "--store", a.store, "--color", "never"]
    # The busiest day of the corpus, for a standup that has something to say.
    usage = json.loads(subprocess.run(base + ["usage", "--json"], env=env, check=True,
                                      stdout=subprocess.PIPE, text=True).stdout)
    busiest = max(usage["rows"], key=lambda r: r["requests"])["key"] if usage["rows"] else "2025-12-01"
    cases = [
        ("usage (all time, by day)", ["usage"], 0.050),
        ("usage --by model", ["usage", "--by", "model"], 0.050),
        ("usage --by session", ["usage", "--by", "session"], None),
        ("usage --since 2025-11-15T12:00:00Z (partial day)", ["usage", "--since", "2025-11-15T12:00:00Z"], 0.050),
        ("standup (last 24 hours)", ["standup"], 0.100),
        ("standup --since %s --until +1 day" % busiest,
         ["standup", "--since", busiest, "--until", busiest + "T23:59:59Z"], 0.100),
        ("tips (all time)", ["tips"], None),
        ("improve (all time)", ["improve"], 1.0),
    ]
    rows = []
    for name, args, target in cases:
        subprocess.run(base + args, env=env, stdout=subprocess.DEVNULL, check=True)  # warm-up
        med, best, _ = timed(base + args, env, a.runs)
        rows.append((name, med, best, target))
    print("store: %s (%.0f MiB)" % (a.store, os.path.getsize(a.store) / 2**20))
    print("%-58s %10s %10s %10s" % ("command", "median", "fastest", "target"))
    for name, med, best, target in rows:
        print("%-58s %9.3fs %9.3fs %10s" % (name, med, best, "<= %gs" % target if target else "-"))

    ccusage = shutil.which("ccusage")
    if not ccusage:
        print("ccusage not installed: npm install -g ccusage@20.0.24")
        return
    cenv = dict(env, CLAUDE_CONFIG_DIR=a.corpus)
    med, best, out = timed([ccusage, "daily", "--json", "--offline"], cenv, a.ccusage_runs)
    c = json.loads(out)["totals"]
    t = usage["totals"]
    pairs = [("input", t["input_tokens"], c["inputTokens"]),
             ("output", t["output_tokens"], c["outputTokens"]),
             ("cache write", t["cache_creation_tokens"], c["cacheCreationTokens"]),
             ("cache read", t["cache_read_tokens"], c["cacheReadTokens"])]
    print("\nccusage daily --json --offline: median %.2fs, fastest %.2fs" % (med, best))
    trail_usage = rows[0][1]
    print("ratio ccusage / trail usage (medians): %.0fx" % (med / trail_usage))
    for name, tv, cv in pairs:
        print("  %-12s trail %15d  ccusage %15d  %s" % (name, tv, cv, "equal" if tv == cv else "DIFFERENT"))
    print("  %-12s trail %15.2f  ccusage %15.2f  %s" % (
        "cost (USD)", t["cost_usd"], c["totalCost"],
        "equal to the cent" if round(t["cost_usd"], 2) == round(c["totalCost"], 2) else "DIFFERENT"))


if __name__ == "__main__":
    main()
