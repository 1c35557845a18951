#!/usr/bin/env python3
"""Benchmark of `trail export --all`: wall time, peak RSS and output throughput.

usage: python3 bench/export.py --store PATH [--format html] [--trail BIN] [--no-redact]

PATH is a store built by `python3 bench/run.py --corpus /tmp/bench/c1g --keep` (it prints the
path). Exports every session into a temporary folder, in a fresh process, and prints the bytes
written, MB/s and peak RSS.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--format", default="html")
    ap.add_argument("--trail", default=None, help="the trail binary (default: build --release)")
    ap.add_argument("--no-redact", action="store_true")
    a = ap.parse_args()
    trail = a.trail
    if trail is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        trail = os.path.join(target, "release", "trail")
    out = tempfile.mkdtemp(prefix="trail-export-bench-")
    cmd = [trail, "--store", a.store, "--color", "never", "export", "--all", "--format", a.format, "--out", out]
    if a.no_redact:
        cmd.append("--no-redact")
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    if p.returncode != 0:
        sys.exit("export failed:\n" + p.stderr)
    written = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    files = len(os.listdir(out))
    store_bytes = sum(os.path.getsize(a.store + s) for s in ("", "-wal") if os.path.exists(a.store + s))
    print("store: %s (%.1f MiB)" % (a.store, store_bytes / 2**20))
    print("format %s%s: %d files, %.1f MB written in %.2fs = %.0f MB/s, peak RSS %.0f MB"
          % (a.format, " (no redaction)" if a.no_redact else "", files, written / 1e6, dt,
             written / 1e6 / dt, rss_mb))
    print("  " + p.stderr.strip().splitlines()[-1])
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
