#!/usr/bin/env python3
"""Speed of `trail diff`: a session with many edits, and the file snapshots of a long VS Code
chat editing session.

usage: python3 bench/diff.py [--work DIR] [--edits N] [--file-lines N] [--runs N] [--trail BIN]

Writes (under --work) a Claude Code session whose one file is written whole (--file-lines
lines) and then edited --edits times (each Edit changes one line, so every diff is exact and
applied to the content the earlier edits left), and a VS Code chat session with --edits / 10
requests whose editing session keeps a snapshot of that file before each request. Indexes both
with the release binary, then times `trail diff ID --json` (median of --runs, wall and CPU) and
reports edits per second and the answer's size.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLAUDE_ID = "d1ff0000-0000-4000-8000-000000000001"
VSCODE_ID = "d1ff0000-0000-4000-8000-000000000002"


def claude_session(root, edits, lines):
    d = os.path.join(root, "claude", "projects", "-bench-diff")
    os.makedirs(d, exist_ok=True)
    path = "/bench/diff/big.rs"
    content = "".join("line %06d of the file\n" % i for i in range(lines))
    out, parent, n = [], None, 0

    def add(kind, message, **extra):
        nonlocal parent, n
        n += 1
        uid = "e-%07d" % n
        rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/bench/diff",
               "sessionId": CLAUDE_ID, "version": "2.1.30", "gitBranch": "main", "type": kind, "uuid": uid,
               "timestamp": "2026-03-01T%02d:%02d:%02d.000Z" % ((n // 3600) % 24, (n // 60) % 60, n % 60),
               "message": message}
        rec.update(extra)
        out.append(json.dumps(rec))
        parent = uid

    def tool(name, inp):
        add("assistant", {"id": "m%d" % n, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "tool_use", "id": "t%d" % n, "name": name, "input": inp}],
                          "usage": {"input_tokens": 1, "output_tokens": 1}}, requestId="r%d" % n)
        add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t%d" % (n - 1),
                                                  "content": "ok"}]})

    add("user", {"role": "user", "content": "write the file"})
    tool("Write", {"file_path": path, "content": content})
    for e in range(edits):
        if e % 50 == 0:
            add("user", {"role": "user", "content": "more edits %d" % e})
        i = (e * 7919) % lines
        old = "line %06d of the file\n" % i
        new = "line %06d of the file, edit %d\n" % (i, e)
        content = content.replace(old, new, 1)
        tool("Edit", {"file_path": path, "old_string": old, "new_string": new})
    with open(os.path.join(d, CLAUDE_ID + ".jsonl"), "w") as f:
        f.write("\n".join(out) + "\n")
    return os.path.join(root, "claude", "projects")


def vscode_session(root, requests, lines):
    ws = os.path.join(root, "vscode", "User", "workspaceStorage", "bench")
    os.makedirs(os.path.join(ws, "chatSessions"), exist_ok=True)
    ed = os.path.join(ws, "chatEditingSessions", VSCODE_ID)
    os.makedirs(os.path.join(ed, "contents"), exist_ok=True)
    reqs, history = [], []
    content = ["line %06d of the file\n" % i for i in range(lines)]
    uri = "file:///bench/diff/snap.rs"
    hashes = []
    for q in range(requests + 1):
        h = "%07x" % q
        with open(os.path.join(ed, "contents", h), "w") as f:
            f.write("".join(content))
        hashes.append(h)
        for k in range(10):
            i = (q * 10 + k) * 104729 % lines
            content[i] = content[i].rstrip("\n") + " changed in request %d\n" % q
    for q in range(requests):
        rid = "request_%d" % q
        reqs.append({"requestId": rid, "message": {"text": "change it %d" % q, "parts": []},
                     "response": [{"value": "done"}], "timestamp": 1767225600000 + q * 1000})
        entries = [] if q == 0 else [{"resource": uri, "languageId": "rust", "originalHash": hashes[0],
                                      "currentHash": hashes[q], "state": 0, "snapshotUri": uri,
                                      "telemetryInfo": {"requestId": "request_0"}}]
        history.append({"requestId": rid, "stops": [{"stopId": None, "entries": entries}], "postEdit": None})
    state = {"version": 2, "sessionId": VSCODE_ID, "initialFileContents": [[uri, hashes[0]]],
             "linearHistory": history, "linearHistoryIndex": requests,
             "recentSnapshot": {"stopId": None, "entries": [{"resource": uri, "languageId": "rust",
                                "originalHash": hashes[0], "currentHash": hashes[requests], "state": 0,
                                "snapshotUri": uri, "telemetryInfo": {"requestId": "request_0"}}]}}
    with open(os.path.join(ed, "state.json"), "w") as f:
        json.dump(state, f)
    chat = {"version": 3, "sessionId": VSCODE_ID, "creationDate": 1767225600000,
            "responderUsername": "GitHub Copilot", "initialLocation": "panel", "requests": reqs}
    with open(os.path.join(ws, "chatSessions", VSCODE_ID + ".json"), "w") as f:
        json.dump(chat, f)
    return os.path.join(root, "vscode")


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd), p.stderr.decode()[:500]))
    return wall, cpu, len(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/trail-bench/diff")
    ap.add_argument("--edits", type=int, default=5000)
    ap.add_argument("--file-lines", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--trail", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    trail = a.trail
    if not trail:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        trail = os.path.join(target, "release", "trail")
    claude = claude_session(a.work, a.edits, a.file_lines)
    vscode = vscode_session(a.work, max(1, a.edits // 10), a.file_lines)
    store = os.path.join(a.work, "diff.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    subprocess.run([trail, "--store", store, "--home", a.work, "index", "--root", "claude-code=" + claude,
                    "--root", "copilot-vscode=" + vscode], check=True, capture_output=True)
    print("%-32s %8s %8s %10s %10s" % ("session", "wall ms", "cpu ms", "changes/s", "answer"))
    for name, sid, changes in [("claude-code: %d Edit calls" % a.edits, CLAUDE_ID, a.edits + 1),
                               ("copilot-vscode: %d snapshots" % (a.edits // 10 + 1), VSCODE_ID, a.edits // 10)]:
        runs = [timed([trail, "--store", store, "diff", sid, "--json"]) for _ in range(a.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print("%-32s %8.0f %8.0f %10.0f %8.1f MB" % (name, wall * 1000, cpu * 1000, changes / wall,
                                                   runs[0][2] / 1e6))
    one = [timed([trail, "--store", store, "diff", CLAUDE_ID, "--turn", "3", "--json"]) for _ in range(a.runs)]
    print("%-32s %8.0f %8.0f" % ("claude-code: --turn 3 only", statistics.median(r[0] for r in one) * 1000,
                                 statistics.median(r[1] for r in one) * 1000))


if __name__ == "__main__":
    main()
