#!/usr/bin/env python3
"""trail serve's benchmark: time to first byte (p50, p90) of the sessions page, the search API
and a 300-turn transcript (streamed: first byte and whole page), then a bounded loopback load
test with wrk (200 connections, at most 30 s, 127.0.0.1 only) reporting requests/s and errors.

usage: python3 bench/web.py [--store STORE] [--total-mib 64] [--runs 50] [--duration 20]
                            [--connections 200] [--no-build | --trail BIN]

Without --store it builds one: a corpus from ../shared/bench/gen_claude_corpus.py (--total-mib;
the 1 GiB store of bench/run.py --keep can be given with --store instead) plus one generated
300-turn Claude Code session, indexed by the release binary. The server is the release binary's
`trail serve --port 0`; requests are raw HTTP/1.1 over loopback sockets, one at a time, after
3 warm-up requests each.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py")
LONG_ID = "10000000-0000-4000-8000-000000000300"


def write_long_session(projects, turns=300):
    """A Claude Code session of `turns` turns: prompt, tool call, tool result, answer each."""
    d = os.path.join(projects, "-bench-long")
    os.makedirs(d, exist_ok=True)
    parent, n, lines = None, 0, []

    def add(kind, message):
        nonlocal parent, n
        n += 1
        uuid = "l-%05d" % n
        lines.append(json.dumps({
            "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/bench/long",
            "sessionId": LONG_ID, "version": "2.1.14", "gitBranch": "main", "type": kind, "uuid": uuid,
            "timestamp": "2026-10-01T%02d:%02d:%02d.000Z" % ((n // 3600) % 24, (n // 60) % 60, n % 60),
            "message": message}))
        parent = uuid

    usage = {"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 900}
    for t in range(turns):
        add("user", {"role": "user", "content": "Turn %d: refactor module_%d and run its tests" % (t, t)})
        add("assistant", {"id": "msg_%da" % t, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                          "content": [{"type": "tool_use", "id": "toolu_%d" % t, "name": "Bash",
                                       "input": {"command": "cargo test -p module_%d" % t}}], "usage": usage})
        add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_%d" % t,
                     "content": "running 40 tests\n" + "test module::case ... ok\n" * 40 + "test result: ok", "is_error": False}]})
        add("assistant", {"id": "msg_%db" % t, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                          "content": [{"type": "text", "text": "Done with module_%d. " % t + "The public API is unchanged. " * 10}],
                          "usage": usage})
    with open(os.path.join(d, LONG_ID + ".jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")


def fetch(port, path):
    """(seconds to the first byte, seconds to the last, status) of one GET."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.perf_counter()
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (path, port)).encode())
    first = s.recv(65536)
    t1 = time.perf_counter()
    data = [first]
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        data.append(b)
    t2 = time.perf_counter()
    s.close()
    status = int(first.split(b" ", 2)[1])
    return t1 - t0, t2 - t0, status, sum(len(x) for x in data)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store")
    ap.add_argument("--total-mib", type=int, default=64)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--no-build", action="store_true", help="use the release binary as it is")
    ap.add_argument("--trail", help="this trail binary (no build)")
    a = ap.parse_args()
    if a.duration > 30:
        sys.exit("the load test runs 30 s at most")
    if a.trail:
        trail = os.path.abspath(a.trail)
    else:
        if not a.no_build:
            subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        trail = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "trail")
    work = tempfile.mkdtemp(prefix="trail-web-bench-")
    store = a.store
    if not store:
        home = os.path.join(work, "home")
        claude = os.path.join(home, ".claude")
        subprocess.run([sys.executable, GEN, claude, "--files", "200", "--large", "0",
                        "--total-mib", str(a.total_mib), "--jobs", "2"], check=True, stdout=subprocess.DEVNULL)
        write_long_session(os.path.join(claude, "projects"))
        store = os.path.join(work, "trail.db")
        subprocess.run([trail, "--store", store, "--home", home, "index", "--source", "claude-code"], check=True,
                       stdout=subprocess.DEVNULL)
    long_id = LONG_ID
    if a.store:
        # A given store has no generated session: the one closest to 300 turns stands in.
        import sqlite3
        db = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
        long_id = db.execute("SELECT id FROM sessions WHERE parent_session_id IS NULL "
                             "ORDER BY abs(turn_count - 300), id LIMIT 1").fetchone()[0]
        db.close()
    server = subprocess.Popen([trail, "--store", store, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))
        print("store %s (%.0f MiB), server on 127.0.0.1:%d" % (store, os.path.getsize(store) / 2**20, port))
        cases = [
            ("sessions page", "/"),
            ("search API (one word)", "/api/search?q=error"),
            ("search API (two words)", "/api/search?q=install+build"),
            ("300-turn transcript", "/sessions/" + long_id),
        ]
        print("%-26s %9s %9s %11s %9s" % ("request", "ttfb p50", "ttfb p90", "total p50", "bytes"))
        for name, path in cases:
            for _ in range(3):
                fetch(port, path)
            firsts, totals, size = [], [], 0
            for _ in range(a.runs):
                t1, t2, status, size = fetch(port, path)
                if status != 200:
                    sys.exit("%s answered %d" % (path, status))
                firsts.append(t1)
                totals.append(t2)
            print("%-26s %7.1fms %7.1fms %9.1fms %9d" % (name, pct(firsts, 50) * 1e3, pct(firsts, 90) * 1e3,
                                                         pct(totals, 50) * 1e3, size))
        wrk = shutil.which("wrk")
        if not wrk:
            print("wrk not installed (apt-get install -y wrk): no load test")
            return
        for name, path in [("sessions page", "/"), ("search API", "/api/search?q=error")]:
            out = subprocess.run([wrk, "-t2", "-c%d" % a.connections, "-d%ds" % a.duration, "--timeout", "10s",
                                  "http://127.0.0.1:%d%s" % (port, path)], capture_output=True, text=True).stdout
            rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
            total = re.search(r"(\d+) requests in", out)
            sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
            non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
            errors = (sum(int(x) for x in sock.groups()) if sock else 0) + (int(non2xx.group(1)) if non2xx else 0)
            lat = re.search(r"Latency\s+(\S+)\s+(\S+)\s+(\S+)", out)
            print("load %-14s %d connections %ds: %s requests/s, %s requests, %d errors, latency avg %s max %s" % (
                name, a.connections, a.duration, rps.group(1) if rps else "?", total.group(1) if total else "?",
                errors, lat.group(1) if lat else "?", lat.group(3) if lat else "?"))
    finally:
        server.terminate()
        server.wait()
        if not a.store:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
