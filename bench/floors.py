#!/usr/bin/env python3
"""What a store's rows and full text cost SQLite alone, with none of trail's code.

Given a store that `trail index` made (say of one source's benchmark corpus), this measures two
lower bounds of indexing it again:

- rows: the store's tables copied into empty tables with the same definitions and indexes, in
  one transaction, by `INSERT INTO t SELECT * FROM src.t` (no parsing, no binding of values);
- full text: the turns' text (prompt and answer) into a contentless FTS5 table with trail's
  tokenizer, in one transaction.

One SQLite file has one writer, so the rows are one thread's work; the full text is tokenized
once here, where trail's search database tokenizes prompts and answers twice (its turn index and
Chronicle's `search_index`). BENCHMARKS.md (issue 16) compares these with the time budget.

    python3 bench/floors.py STORE [--tables messages,turns]
"""
import argparse
import os
import sqlite3
import tempfile
import time

DEFAULT_TABLES = "messages,turns,tool_calls,usage,session_files,session_refs"


def timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def rows_floor(store, tables, work):
    src = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    dst_path = os.path.join(work, "rows.db")
    dst = sqlite3.connect(dst_path, isolation_level=None)
    # As trail's store: WAL, synchronous NORMAL, a 32 MB cache.
    dst.execute("PRAGMA journal_mode = WAL")
    dst.execute("PRAGMA synchronous = NORMAL")
    dst.execute("PRAGMA cache_size = -32000")
    counts = {}
    for t in tables:
        (sql,) = src.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (t,)).fetchone()
        dst.execute(sql)
        for (idx,) in src.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", (t,)
        ):
            dst.execute(idx)
        counts[t] = src.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
    dst.execute(f"ATTACH 'file:{store}?mode=ro' AS src")

    def copy():
        dst.execute("BEGIN")
        for t in tables:
            dst.execute(f"INSERT INTO main.{t} SELECT * FROM src.{t}")
        dst.execute("COMMIT")

    cpu, wall = timed(copy)
    dst.close()
    return counts, cpu, wall


def text_floor(store, work):
    src = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    texts = [
        r[0]
        for r in src.execute("SELECT coalesce(user_message, '') || ' ' || coalesce(assistant_response, '') FROM turns")
    ]
    db = sqlite3.connect(os.path.join(work, "text.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(c, content = '', tokenize = 'unicode61 remove_diacritics 2')")

    def insert():
        db.execute("BEGIN")
        db.executemany("INSERT INTO t (rowid, c) VALUES (?, ?)", enumerate(texts, 1))
        db.execute("COMMIT")

    cpu, wall = timed(insert)
    return len(texts), sum(len(t.encode()) for t in texts), cpu, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--tables", default=DEFAULT_TABLES, help="tables to copy (comma-separated)")
    a = ap.parse_args()
    tables = [t for t in a.tables.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="trail-floors-") as work:
        counts, cpu, wall = rows_floor(a.store, tables, work)
        print("rows: " + ", ".join(f"{t} {n:,}" for t, n in counts.items()))
        print(f"  copied with their indexes in one transaction: {cpu:.2f} CPU-s, {wall:.2f} s wall")
        turns, size, cpu, wall = text_floor(a.store, work)
        print(f"full text: {turns:,} turns, {size / 1e6:.1f} MB of prompt and answer")
        print(f"  one contentless FTS5 table, one transaction: {cpu:.2f} CPU-s, {wall:.2f} s wall")


if __name__ == "__main__":
    main()
