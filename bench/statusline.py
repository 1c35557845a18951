#!/usr/bin/env python3
"""Benchmark of `trail statusline` (issue 19): p50/p99 over N runs with hyperfine, against
`ccusage statusline` on the same Claude Code corpus.

usage: python3 bench/statusline.py --corpus DIR [--store STORE] [--trail BIN] [--runs 200]
                                   [--ccusage BIN] [--ccusage-runs 20]

DIR is a corpus from ../shared/bench/gen_claude_corpus.py (DIR/projects/<slug>/<id>.jsonl).
STORE (default DIR/../statusline-store.db) is indexed from DIR first when it does not exist.
The status line is asked about the session whose last request is the newest in the corpus, as
Claude Code would after a message. Cases, each in a fresh process per run (hyperfine, which
subtracts the shell's start-up):

  * no change: the transcript is already indexed (the usual case: trail checks it and reads);
  * append: before each run (hyperfine --prepare, not timed) one request is appended to the
    transcript, so every timed run indexes it first;
  * no active block: "now" is the real clock, long after the corpus (no TRAIL_NOW).

The first two fix "now" with TRAIL_NOW two minutes after the newest request, so an active block
is found and drawn. ccusage (`npm install ccusage@20.0.24`) runs as `CLAUDE_CONFIG_DIR=DIR
ccusage statusline --offline --no-cache` (its cache would otherwise answer from the previous
run); it cannot be given a "now".
"""
import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def newest_session(corpus):
    """The transcript whose last timestamp is the newest, and that timestamp."""
    best = (None, "")
    for dirpath, _, files in os.walk(os.path.join(corpus, "projects")):
        for name in files:
            if not name.endswith(".jsonl"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                f.seek(max(0, os.path.getsize(path) - 262144))
                tail = f.read().decode("utf-8", "replace").splitlines()
            for line in reversed(tail):
                try:
                    ts = json.loads(line).get("timestamp")
                except ValueError:
                    continue
                if ts:
                    if ts > best[1]:
                        best = (path, ts)
                    break
    return best


def append_request(path):
    """Appends one assistant request with fresh ids (the --prepare step of the append case)."""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - 262144))
        tail = f.read().decode("utf-8", "replace").splitlines()
    last = None
    for line in reversed(tail):
        try:
            last = json.loads(line)
            break
        except ValueError:
            continue
    sid = last.get("sessionId", "s")
    n = int.from_bytes(os.urandom(6), "big")
    obj = {
        "type": "assistant", "uuid": "bench-%x" % n, "parentUuid": last.get("uuid"),
        "isSidechain": False, "sessionId": sid, "timestamp": last.get("timestamp"),
        "cwd": last.get("cwd", "/w"), "version": "2.0.14", "requestId": "req_bench_%x" % n,
        "message": {"id": "msg_bench_%x" % n, "model": "claude-sonnet-4-5-20250929",
                    "role": "assistant", "type": "message",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 10, "output_tokens": 20,
                              "cache_creation_input_tokens": 300,
                              "cache_read_input_tokens": 40000}},
    }
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(obj, separators=(",", ":")) + "\n")


def hyperfine(name, command, runs, prepare=None):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    cmd = ["hyperfine", "--runs", str(runs), "--warmup", "3", "--style", "none",
           "--export-json", out]
    if prepare:
        cmd += ["--prepare", prepare]
    cmd.append(command)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        times = sorted(json.load(f)["results"][0]["times"])
    os.unlink(out)
    p = lambda q: times[min(len(times) - 1, int(round(q * (len(times) - 1))))] * 1000
    return {"case": name, "runs": len(times), "p50": p(0.50), "p90": p(0.90),
            "p99": p(0.99), "max": times[-1] * 1000, "mean": statistics.mean(times) * 1000}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--append":
        append_request(sys.argv[2])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--store")
    ap.add_argument("--trail", help="trail binary (default: build target/release/trail)")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--ccusage", help="ccusage binary (skipped when absent)")
    ap.add_argument("--ccusage-runs", type=int, default=20)
    a = ap.parse_args()
    corpus = os.path.abspath(a.corpus)
    store = a.store or os.path.join(os.path.dirname(corpus), "statusline-store.db")
    trail = a.trail
    if not trail:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        trail = os.path.join(target, "release", "trail")
    env = dict(os.environ, NO_COLOR="1", TRAIL_TZ="UTC")
    if not os.path.exists(store):
        subprocess.run([trail, "--store", store, "index", "--source", "claude-code", "--root",
                        "claude-code=" + os.path.join(corpus, "projects")], check=True, env=env)
    rows = subprocess.run([trail, "--store", store, "sql", "--json",
                           "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM usage)"],
                          check=True, env=env, stdout=subprocess.PIPE, text=True).stdout
    sessions, requests = json.loads(rows)["rows"][0]
    transcript, last_ts = newest_session(corpus)
    sid = os.path.splitext(os.path.basename(transcript))[0]
    hook = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"hook_event_name": "Status", "session_id": sid, "transcript_path": transcript,
               "cwd": "/w", "model": {"id": "claude-sonnet-4-5-20250929",
                                      "display_name": "Sonnet 4.5"},
               "workspace": {"current_dir": "/w", "project_dir": "/w"}, "version": "2.0.14",
               "cost": {"total_cost_usd": 0.0}}, hook)
    hook.close()
    now = (datetime.datetime.fromisoformat(last_ts.replace("Z", "+00:00"))
           + datetime.timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    q = shlex.quote
    base = "%s --store %s statusline < %s" % (q(trail), q(store), q(hook.name))
    line = subprocess.run("TRAIL_NOW=%s %s" % (now, base), shell=True, env=env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    print("store: %s (%.1f MiB, %d sessions, %d requests)" % (
        store, os.path.getsize(store) / 2**20, sessions, requests))
    print("transcript: %s (%.1f MiB), now = %s" % (
        transcript, os.path.getsize(transcript) / 2**20, now))
    print("trail says: %s" % line)
    results = [
        hyperfine("trail, no change", "TRAIL_NOW=%s %s" % (now, base), a.runs),
        hyperfine("trail, one request appended before each run", "TRAIL_NOW=%s %s" % (now, base),
                  a.runs, prepare="python3 %s --append %s" % (q(os.path.abspath(__file__)), q(transcript))),
        hyperfine("trail, no active block (real clock)", base, a.runs),
    ]
    if a.ccusage:
        cc = "CLAUDE_CONFIG_DIR=%s %s statusline --offline --no-cache < %s" % (
            q(corpus), q(a.ccusage), q(hook.name))
        out = subprocess.run(cc, shell=True, env=env, stdout=subprocess.PIPE, text=True).stdout.strip()
        print("ccusage says: %s" % out)
        results.append(hyperfine("ccusage statusline --no-cache", cc, a.ccusage_runs))
    os.unlink(hook.name)
    print("\n| case | runs | p50 ms | p90 ms | p99 ms | max ms | mean ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            r["case"], r["runs"], r["p50"], r["p90"], r["p99"], r["max"], r["mean"]))


if __name__ == "__main__":
    main()
