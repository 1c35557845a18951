#!/usr/bin/env python3
"""Where an index's second core goes: runs one full index into a new store and samples, every
TICK seconds, the CPU time of each of trail's threads (from /proc) and the machine's idle,
I/O-wait and stolen time, with trail's -v log lines placed at the moment they were printed.

usage: python3 bench/timeline.py CORPUS [--trail PATH] [--tick 0.1] [--source claude-code]

Threads: W is the store's writer (the main thread), chk the checkpointer, srch the search
database's writer, p0, p1... the parsers (trail names its threads; any other thread is shown by
the last digits of its id). A tick in which W runs and
the others do not is time the second core had nothing to do. The last lines sum each thread's
CPU time (and the system part of it: the kernel's work for that thread, such as copying what it
writes into the page cache), the idle core-seconds of the run and the ticks in which the writer
ran alone.
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def threads(pid):
    """CPU ticks of each thread of pid: {tid: (name, ticks, of which system ticks)}."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (name, int(fields[11]) + int(fields[12]), int(fields[12]))
    return out


def label(name, tid):
    """A short column name for a thread, from the name trail gives it (Linux keeps 15 bytes)."""
    for prefix, short in (("trail-checkpoi", "chk"), ("trail-search", "srch"), ("trail-plan", "plan")):
        if name.startswith(prefix):
            return short
    if name.startswith("trail-parse-"):
        return "p" + name[len("trail-parse-"):]
    return "t" + tid[-2:]


def machine():
    """The machine's CPU counters: user nice system idle iowait irq softirq steal."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--trail", default=os.path.join(ROOT, "target", "release", "trail"))
    ap.add_argument("--tick", type=float, default=0.1)
    ap.add_argument("--source", default="claude-code")
    a = ap.parse_args()
    hz = os.sysconf("SC_CLK_TCK")
    work = tempfile.mkdtemp(prefix="trail-timeline-")
    cmd = [a.trail, "--store", os.path.join(work, "trail.db"), "-v", "--color", "never", "index",
           "--source", a.source, "--root", "%s=%s" % (a.source, a.corpus)]
    started = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    logs = []

    def read_log():
        for line in p.stderr:
            logs.append((time.time() - started, line.strip()))

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    prev, prev_machine, rows = threads(p.pid), machine(), []
    system = {}  # system ticks by thread, over the run
    while p.poll() is None:
        time.sleep(a.tick)
        cur, now = threads(p.pid), machine()
        by = {}
        for tid, (name, ticks, sys_ticks) in cur.items():
            key = "W" if tid == str(p.pid) else label(name, tid)
            by[key] = by.get(key, 0) + ticks - prev.get(tid, (name, 0, 0))[1]
            system[key] = system.get(key, 0) + sys_ticks - prev.get(tid, (name, 0, 0))[2]
        rows.append((time.time() - started, by, [b - c for b, c in zip(now, prev_machine)]))
        prev, prev_machine = cur, now
    reader.join(timeout=1)
    shutil.rmtree(work)
    quiet = ("parsed a piece", "usage rollup", "batch committed")
    events = [(t, line) for t, line in logs if not any(q in line for q in quiet)]
    totals, idle, alone = {}, 0.0, 0
    full = a.tick * hz  # ticks one core can give in a tick
    for t, by, counters in rows:
        while events and events[0][0] <= t:
            print("      %6.2f %s" % events.pop(0))
        span = sum(counters) or 1
        print("%6.2f  %-48s | idle %3d%% iowait %3d%% steal %3d%%" % (
            t, " ".join("%s=%d" % kv for kv in sorted(by.items()) if kv[1]),
            200 * counters[3] // span, 200 * counters[4] // span, 200 * counters[7] // span))
        for k, v in by.items():
            totals[k] = totals.get(k, 0) + v
        used = sum(by.values())
        idle += max(0.0, 2 * full - used) / hz
        others = used - by.get("W", 0)
        if by.get("W", 0) >= 0.8 * full and others <= 0.3 * full:
            alone += 1
    for t, line in events:
        print("      %6.2f %s" % (t, line))
    print("CPU seconds by thread (of which system):", ", ".join(
        "%s %.2f (%.2f)" % (k, v / hz, system.get(k, 0) / hz) for k, v in sorted(totals.items())))
    print("idle core-seconds (of 2 cores): %.2f; ticks with the writer alone: %d of %d (%.2f s)"
          % (idle, alone, len(rows), alone * a.tick))


if __name__ == "__main__":
    main()
