#!/usr/bin/env python3
"""trail's MCP server benchmark: latency seen by a client over stdio, start-up, idle memory.

usage: python3 bench/mcp.py STORE [--trail PATH] [--runs 100]

STORE is a store built by `python3 bench/run.py --corpus DIR --keep` (the 1 GiB synthetic
corpus by default). Starts `trail --store STORE mcp --no-refresh` (so that only queries are
timed, never an index) and speaks newline-delimited JSON-RPC to it directly, the way every
stdio MCP client does, so the figures are the server's and the pipe's, not a client library's.

Measures, with p50 and p95 over --runs calls each (after one warm-up call):
  - search: a rotation of queries (a rare word, two words, a phrase, a prefix, a common word)
  - get_session: the first page of the two sessions closest to 300 turns, alternating, so
    that every call reads the session from the store (the server keeps one session between
    pages of the same session)
  - file_history: the path the most sessions touched, and four others
and the time from starting the process to the answer of `initialize` (10 starts), and the
server's resident memory once ready (idle) and after the calls.
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUERIES = ["aalways", "install error", '"error function"', "deploy*", "what"]


class Server:
    def __init__(self, trail, store):
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen([trail, "--store", store, "mcp", "--no-refresh"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        # Buffered: with bufsize=0, readline() reads a reply one byte per system call, which
        # cost 7 ms of a 20-hit search reply (11 KB); a real client reads in blocks. Every
        # request is flushed as it is written.
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("the server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    sys.exit("%s failed: %s" % (method, reply["error"]))
                return reply["result"]

    def initialize(self):
        result = self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "trail-bench", "version": "1"},
        })
        ready = time.perf_counter() - self.t0
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode())
        self.p.stdin.flush()
        return result, ready

    def call(self, tool, args):
        t = time.perf_counter()
        r = self.request("tools/call", {"name": tool, "arguments": args})
        dt = time.perf_counter() - t
        if r.get("isError"):
            sys.exit("%s %s failed: %s" % (tool, args, r["content"][0]["text"]))
        return dt, r

    def rss_mb(self, field="VmRSS"):
        """Resident memory; RssAnon is the server's own, RssFile the store's pages it maps
        (page cache shared with every reader of the file, given back under memory pressure)."""
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--trail", help="the trail binary (default: build the release one)")
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
    trail = a.trail
    if not trail:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        trail = os.path.join(target, "release", "trail")

    db = sqlite3.connect("file:%s?mode=ro" % a.store, uri=True)
    sessions = [r[0] for r in db.execute(
        "SELECT id FROM sessions WHERE parent_session_id IS NULL AND turn_count >= 1 "
        "ORDER BY abs(turn_count - 300), id LIMIT 2")]
    turns = [db.execute("SELECT turn_count FROM sessions WHERE id = ?", (s,)).fetchone()[0] for s in sessions]
    paths = [r[0] for r in db.execute(
        "SELECT file_path FROM session_files WHERE file_path LIKE '/%' "
        "GROUP BY file_path ORDER BY count(DISTINCT session_id) DESC, file_path LIMIT 5")]
    size_mib = os.path.getsize(a.store) / 2**20
    db.close()
    if not sessions or not paths:
        sys.exit("the store has no sessions or no file touches")

    starts = []
    for _ in range(10):
        s = Server(trail, a.store)
        _, ready = s.initialize()
        starts.append(ready)
        s.close()

    s = Server(trail, a.store)
    s.initialize()
    s.request("tools/list", {})
    idle = s.rss_mb()
    work = {
        "search": lambda i: ("search", {"query": QUERIES[i % len(QUERIES)]}),
        "get_session (first page)": lambda i: ("get_session", {"id": sessions[i % len(sessions)]}),
        "file_history": lambda i: ("file_history", {"path": paths[i % len(paths)]}),
    }
    rows = []
    for name, make in work.items():
        tool, args = make(0)
        s.call(tool, args)  # warm-up
        times, sizes = [], []
        for i in range(a.runs):
            tool, args = make(i + 1)
            dt, r = s.call(tool, args)
            times.append(dt * 1000)
            sizes.append(len(json.dumps(r)))
        rows.append((name, statistics.median(times), pct(times, 0.95), max(sizes)))
    after = s.rss_mb()
    after_anon = s.rss_mb("RssAnon")
    after_file = s.rss_mb("RssFile")
    s.close()

    print("store: %s (%.0f MiB); sessions for get_session: %s (%s turns)" % (
        a.store, size_mib, ", ".join(x[:24] for x in sessions), ", ".join(map(str, turns))))
    print("%-26s %9s %9s %14s" % ("call", "p50 ms", "p95 ms", "largest reply"))
    for name, p50, p95, size in rows:
        print("%-26s %9.1f %9.1f %14d" % (name, p50, p95, size))
    print("%-26s %9.1f %9.1f" % ("start to ready (10 runs)", statistics.median(starts) * 1000,
                                  pct(starts, 0.95) * 1000))
    print("RSS: %.1f MB idle (ready, before any tool call), %.1f MB after the calls "
          "(%.1f MB its own memory, %.1f MB the store's mapped pages)" % (idle, after, after_anon, after_file))


if __name__ == "__main__":
    sys.exit(main())
