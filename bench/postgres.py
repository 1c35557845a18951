#!/usr/bin/env python3
"""The team store's benchmark (issue 20): first sync of a store into an empty PostgreSQL
database, a sync with nothing new, search p50 and usage on the team store; then a team: several
generated stores ("machines") synced into one database, with the sync time of each and search
p50 as the team grows.

usage: python3 bench/postgres.py [--store STORE | --total-mib 100] [--machines 5,10,20]
                                 [--machine-mib 200] [--runs 20] [--no-build]
                                 [--skip-team] [--skip-single] [--workdir DIR]
                                 [--stores-dir DIR] [--prepare-only]

The team part makes one store per machine: a corpus of --machine-mib generated with a seed of
its own (1000 + machine number, so every machine's sessions differ), indexed by the release
binary, then the corpus is deleted. With --stores-dir the stores are kept there and reused by the
next run (mNN.db; --prepare-only makes them and stops), so the sync figures can be measured
again without generating 20 corpora; a stored store is copied before it is synced.

Without --store, a corpus is generated with ../shared/bench/gen_claude_corpus.py (--total-mib)
and indexed by the release binary. A store given with --store is copied first (a sync writes the
store's id into it). The PostgreSQL server is the benchmark's own: initdb in a temporary folder
(as the `postgres` user when run as root), listening on a loopback port, stopped at the end.
Times are wall-clock times of the `trail` process (connection included), median of --runs.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_claude_corpus.py")
QUERIES = ["error", "function test", "\"file error\"", "build*", "water OR oil", "update NOT change",
           "people", "number find", "code*", "write"]


def pg_bin():
    base = "/usr/lib/postgresql"
    versions = sorted((int(v), v) for v in os.listdir(base) if v.isdigit()) if os.path.isdir(base) else []
    if versions:
        return os.path.join(base, versions[-1][1], "bin")
    sys.exit("PostgreSQL is not installed (Debian: apt-get install postgresql)")


class Server:
    """A throwaway PostgreSQL server on 127.0.0.1."""

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "pg")
        os.makedirs(self.dir)
        self.root = os.geteuid() == 0
        if self.root:
            shutil.chown(workdir, "postgres", "postgres")
            shutil.chown(self.dir, "postgres", "postgres")
        data = os.path.join(self.dir, "data")
        self.run("initdb", "-D", data, "-U", "bench", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(
            self.cmd("postgres", "-D", data, "-k", self.dir, "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
                     "-c", "shared_buffers=256MB", "-c", "max_wal_size=4GB", "-c", "synchronous_commit=off"),
            stdout=log, stderr=log)
        for _ in range(600):
            if subprocess.run(self.cmd("pg_isready", "-h", "127.0.0.1", "-p", str(self.port)),
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            sys.exit("the benchmark's PostgreSQL did not start")

    def cmd(self, program, *args):
        path = os.path.join(pg_bin(), program)
        if self.root:
            return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", path, *args]
        return [path, *args]

    def run(self, program, *args):
        subprocess.run(self.cmd(program, *args), check=True, capture_output=True)

    def sql(self, db, sql):
        subprocess.run(self.cmd("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "bench", "-d", db,
                                "-v", "ON_ERROR_STOP=1", "-qc", sql), check=True, capture_output=True)

    def url(self, user, db):
        return "postgres://%s@127.0.0.1:%d/%s" % (user, self.port, db)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def trail_bin(build):
    if build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "trail-cli"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "trail")


def timed(cmd, env=None):
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t
    if out.returncode not in (0, 1):
        sys.exit("%s failed (%d): %s" % (" ".join(cmd[:6]), out.returncode, out.stderr))
    return elapsed, out.stdout


def machine_store(trail, a, work, n):
    """Machine n's store: kept in --stores-dir when given (made once), else made in work."""
    name = "m%02d" % n
    if a.stores_dir:
        kept = os.path.join(a.stores_dir, name + ".db")
        if not os.path.exists(kept):
            made = make_store(trail, a.stores_dir, a.machine_mib, 1000 + n, name + "-new")
            os.rename(made, kept)
            shutil.rmtree(os.path.join(a.stores_dir, "home-" + name + "-new"), ignore_errors=True)
        if a.prepare_only:
            return kept
        store = os.path.join(work, name + ".db")
        shutil.copyfile(kept, store)
        return store
    return make_store(trail, work, a.machine_mib, 1000 + n, name)


def make_store(trail, work, mib, seed, name):
    """Generates a corpus, indexes it, deletes the corpus; returns the store."""
    corpus = os.path.join(work, "corpus-" + name)
    subprocess.run([sys.executable, GEN, corpus, "--total-mib", str(mib), "--seed", str(seed),
                    "--files", str(max(20, int(mib * 2))), "--large", "0", "--jobs", "2"],
                   check=True, capture_output=True)
    home = os.path.join(work, "home-" + name)
    os.makedirs(os.path.join(home, ".claude"))
    os.symlink(os.path.join(corpus, "projects"), os.path.join(home, ".claude", "projects"))
    store = os.path.join(work, name + ".db")
    subprocess.run([trail, "--store", store, "--home", home, "index"], check=True, capture_output=True)
    shutil.rmtree(corpus)
    return store


def p50(samples):
    return statistics.median(samples) * 1000


def single(a, trail, work, server):
    """One store: first sync, no-change sync, search and usage on the team store."""
    if a.store:
        store = os.path.join(work, "store.db")
        shutil.copyfile(a.store, store)
        if os.path.exists(a.store + "-search"):
            # The full-text database next to a store (local migration 14).
            shutil.copyfile(a.store + "-search", store + "-search")
    else:
        store = make_store(trail, work, a.total_mib, 42, "one")
    size = os.path.getsize(store)
    server.sql("postgres", "CREATE DATABASE one")
    url = server.url("bench", "one")
    first, out = timed([trail, "--store", store, "sync", url, "--json", "--no-redact"])
    summary = json.loads(out)
    sessions = len(summary["plan"]["new"])
    first_redacted = None
    server.sql("postgres", "CREATE DATABASE redacted")
    first_redacted, _ = timed([trail, "--store", store, "sync", server.url("bench", "redacted"), "--json"])
    server.sql("one", "VACUUM ANALYZE")
    nochange = [timed([trail, "--store", store, "sync", url, "--json", "--no-redact"])[0] for _ in range(5)]
    search = []
    for _ in range(max(1, a.runs // len(QUERIES))):
        for q in QUERIES:
            search.append(timed([trail, "--store", url, "search", q, "--json"])[0])
    local_search = []
    for q in QUERIES:
        local_search.append(timed([trail, "--store", store, "search", q, "--json"])[0])
    usage = [timed([trail, "--store", url, "usage", "--json"])[0] for _ in range(a.runs)]
    usage_model = [timed([trail, "--store", url, "usage", "--by", "model", "--json"])[0] for _ in range(a.runs)]
    local_usage = [timed([trail, "--store", store, "usage", "--json"])[0] for _ in range(a.runs)]
    results = {
        "store_mib": round(size / 2**20, 1),
        "sessions": sessions,
        "first_sync_s": round(first, 2),
        "first_sync_redacted_s": round(first_redacted, 2),
        "no_change_sync_ms_p50": round(p50(nochange), 1),
        "search_ms_p50": round(p50(search), 1),
        "search_ms_p50_local": round(p50(local_search), 1),
        "usage_ms_p50": round(p50(usage), 1),
        "usage_by_model_ms_p50": round(p50(usage_model), 1),
        "usage_ms_p50_local": round(p50(local_usage), 1),
    }
    print(json.dumps(results, indent=2), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store")
    ap.add_argument("--total-mib", type=float, default=100)
    ap.add_argument("--machines", default="5,10,20")
    ap.add_argument("--machine-mib", type=float, default=200)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--skip-team", action="store_true")
    ap.add_argument("--skip-single", action="store_true")
    ap.add_argument("--workdir", help="parent folder of the run's scratch folder (default: the system's)")
    ap.add_argument("--stores-dir", help="keep the machines' stores here and reuse them")
    ap.add_argument("--prepare-only", action="store_true", help="make the machines' stores and stop")
    a = ap.parse_args()
    trail = trail_bin(not a.no_build)
    steps = sorted(int(m) for m in a.machines.split(","))
    if a.prepare_only:
        if not a.stores_dir:
            sys.exit("--prepare-only needs --stores-dir")
        os.makedirs(a.stores_dir, exist_ok=True)
        for n in range(steps[-1]):
            t = time.perf_counter()
            store = machine_store(trail, a, a.stores_dir, n)
            print(json.dumps({"machine": n, "store_mib": round(os.path.getsize(store) / 2**20, 1),
                              "made_s": round(time.perf_counter() - t, 1)}), flush=True)
        return
    work = tempfile.mkdtemp(prefix="trail-bench-pg-", dir=a.workdir)
    server = Server(work)
    try:
        if not a.skip_single:
            single(a, trail, work, server)
        if not a.skip_team:
            team(a, trail, work, server, steps)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def team(a, trail, work, server, steps):
    """Machines synced one after another into one database, each as its own role and host;
    after each step, search and usage over the whole team."""
    server.sql("postgres", "CREATE DATABASE team")
    team_url = server.url("bench", "team")
    subprocess.run([trail, "db", "migrate", team_url], check=True, capture_output=True)
    synced = 0
    for step in steps:
        times = []
        sessions = 0
        while synced < step:
            m = "m%02d" % synced
            server.sql("team", "CREATE ROLE %s LOGIN IN ROLE trail_writer, trail_reader" % m)
            s = machine_store(trail, a, work, synced)
            env = dict(os.environ, HOSTNAME="machine-%02d" % synced)
            t, out = timed([trail, "--store", s, "sync", server.url(m, "team"), "--json"], env=env)
            sessions += len(json.loads(out)["plan"]["new"])
            times.append(t)
            print(json.dumps({"machine": synced, "store_mib": round(os.path.getsize(s) / 2**20, 1),
                              "sync_s": round(t, 2)}), flush=True)
            os.remove(s)
            synced += 1
        server.sql("team", "VACUUM ANALYZE")
        search = []
        for _ in range(max(1, a.runs // len(QUERIES))):
            for q in QUERIES:
                search.append(timed([trail, "--store", team_url, "search", q, "--json"])[0])
        usage = [timed([trail, "--store", team_url, "usage", "--json"])[0] for _ in range(5)]
        usage_user = [timed([trail, "--store", team_url, "usage", "--user", "m00", "--json"])[0]
                      for _ in range(5)]
        print(json.dumps({
            "machines": step,
            "machine_mib": a.machine_mib,
            "sync_s_each_p50": round(statistics.median(times), 2),
            "sync_s_each_max": round(max(times), 2),
            "search_ms_p50": round(p50(search), 1),
            "usage_ms_p50": round(p50(usage), 1),
            "usage_one_user_ms_p50": round(p50(usage_user), 1),
        }), flush=True)


if __name__ == "__main__":
    main()
