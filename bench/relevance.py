#!/usr/bin/env python3
"""Known-item relevance of `trail search`: can a person find the session they remember from a
few words of it? Six classes of queries, each reported on its own (issues 43 and 44).

usage: python3 bench/relevance.py --store STORE --corpus DIR [--queries 60] [--seed N]
                                  [--classes 1,2,3,4,5,6] [--trail PATH] [--misses]

STORE is a store built from the Claude Code corpus DIR (`python3 bench/run.py --keep` prints
its path). The script reads every prompt, assistant answer and tool output of the corpus and
counts in how many prompts (answers) each word appears. The classes:
  1. three mid-frequency words of a prompt: words found in 0.2% to 5% of the prompts (rarer
     words would make the task trivial, commoner ones are stopwords), three chosen at random
     among a prompt's (the class this benchmark had before issue 43);
  2. a prompt's three rarest words among those found in at least 3% of the prompts and longer
     than three letters, so common words such as "issue", "would" and "their" come in;
  3. two words of an assistant answer: its two rarest words among those found in at least
     0.2% of the answers and longer than three letters;
  4. a distinctive token of a tool output, from the part the index keeps (its first 600
     characters): a file path with its line number (`/home/u/proj/a/b.rs:120`), or a failed
     test's name and `FAILED`;
  5. four consecutive words of a prompt, quoted as a phrase;
  6. one mid-frequency word of a prompt (as class 1 draws its words, one of them): a query of
     one word, whose prompt tier is ordered by the prompt's own score on the index of prompts
     alone (before it, by bm25 of the turn). Ambiguous by nature: a word of 0.2% of the prompts
     at least is in 20 of the 1 GiB corpus' 10,000, so what counts is the ranking's MRR against
     another's, on the same queries.
Queries are drawn at random (seeded; the seed is new on every run unless --seed is given, and
is printed) among the prompts, answers or outputs that have what the class needs; each class
draws with its own generator, so adding a class leaves the others' queries as they were.
Each query runs `trail search --json --limit 10` in a fresh process, as a person's would
(--bm25-only: the ranking before issue 43, bm25 alone over one row per turn, through `trail
sql`). The
known item is the session the words came from: recall@10 is the share of queries that have it
among the 10 hits, MRR the mean of 1/rank of its first hit (0 when absent). The median time of
a query (process start included) is printed per class.

How ambiguous a class is, beside what any ranking can do about it: `<=10 ses` is the share of
its queries whose words are all held by texts of the class's kind (prompts or answers; every
word, anywhere in the text; not for class 4: its tool outputs are most of the corpus' bytes,
too slow to index here) of at most 10 sessions, and `blind` the recall@10
expected of a ranking that could not tell those sessions apart (the mean of min(1, 10 / their
number)). A query above 10 sessions is not lost: the texts that hold its words differ (a short
prompt that holds them is likelier to be the one they were drawn from). --misses prints each
missed query with that number of sessions.
"""
import argparse
import collections
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What FTS5's unicode61 tokenizer calls a word, near enough for choosing query words.
WORD = re.compile(r"[^\W_]+", re.UNICODE)
LOW, HIGH = 0.002, 0.05
COMMON = 0.03
# What the index keeps of a tool output longer than 800 characters: its first 600.
OUTPUT_HEAD = 600
PATH_LINE = re.compile(r"(/home/u/proj/[\w/.-]+\.\w+:\d+):\d+: ")
FAILED = re.compile(r"^test (\S+) \.\.\. FAILED", re.MULTILINE)

CLASSES = {
    1: "3 mid-frequency words of a prompt",
    2: "3 rarest common words of a prompt",
    3: "2 words of an answer",
    4: "a tool output's token",
    5: "a quoted 4-word phrase",
    6: "1 mid-frequency word of a prompt",
}


def texts_of(corpus):
    """(prompts, answers, outputs): lists of (session id, text) from the corpus' Claude Code
    files. Prompts are user lines whose content is text; answers the text blocks of assistant
    lines; outputs the text of tool results."""
    prompts, answers, outputs = [], [], []
    for d, _, fs in os.walk(corpus):
        for f in sorted(fs):
            if not f.endswith(".jsonl"):
                continue
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                for line in fh:
                    try:
                        o = json.loads(line)
                    except ValueError:
                        continue
                    sid = o.get("sessionId")
                    c = o.get("message", {}).get("content") if isinstance(o.get("message"), dict) else None
                    if not sid or c is None:
                        continue
                    if o.get("type") == "user" and isinstance(c, str):
                        prompts.append((sid, c))
                    elif o.get("type") == "assistant" and isinstance(c, list):
                        for b in c:
                            if b.get("type") == "text" and b.get("text"):
                                answers.append((sid, b["text"]))
                    elif o.get("type") == "user" and isinstance(c, list):
                        for b in c:
                            if b.get("type") == "tool_result" and isinstance(b.get("content"), str):
                                outputs.append((sid, b["content"]))
    return prompts, answers, outputs


def doc_freq(texts):
    df = collections.Counter()
    for _, text in texts:
        df.update(set(w.lower() for w in WORD.findall(text)))
    return df


def words_of(text):
    return sorted(set(w.lower() for w in WORD.findall(text)))


def draw(rng, items, make, n):
    """Up to n queries: make(item, rng) for items in a random order, skipping None."""
    order = list(range(len(items)))
    rng.shuffle(order)
    out = []
    for i in order:
        if len(out) == n:
            break
        q = make(items[i], rng)
        if q is not None:
            out.append((items[i][0], q))
    return out


def class_queries(cls, rng, n, prompts, answers, outputs, pdf, adf):
    """The queries of class cls: (known session, query words as arguments)."""
    np_, na = len(prompts), len(answers)
    if cls == 1:
        mid = lambda w: len(w) >= 3 and LOW * np_ <= pdf[w] <= HIGH * np_

        def make(item, rng):
            ws = [w for w in words_of(item[1]) if mid(w)]
            return rng.sample(ws, 3) if len(ws) >= 3 else None
        return draw(rng, prompts, make, n)
    if cls == 2:
        def make(item, rng):
            ws = [w for w in words_of(item[1]) if len(w) > 3 and pdf[w] >= COMMON * np_]
            if len(ws) < 3:
                return None
            ws.sort(key=lambda w: (pdf[w], w))
            return ws[:3]
        return draw(rng, prompts, make, n)
    if cls == 3:
        def make(item, rng):
            ws = [w for w in words_of(item[1]) if len(w) > 3 and adf[w] >= LOW * na]
            if len(ws) < 2:
                return None
            ws.sort(key=lambda w: (adf[w], w))
            return ws[:2]
        return draw(rng, answers, make, n)
    if cls == 4:
        def make(item, rng):
            head = item[1][:OUTPUT_HEAD] if len(item[1]) > 800 else item[1]
            found = [[m] for m in PATH_LINE.findall(head)]
            found += [[m, "FAILED"] for m in FAILED.findall(head)]
            return rng.choice(found) if found else None
        return draw(rng, outputs, make, n)
    if cls == 6:
        mid = lambda w: len(w) >= 3 and LOW * np_ <= pdf[w] <= HIGH * np_

        def make(item, rng):
            ws = [w for w in words_of(item[1]) if mid(w)]
            return [rng.choice(ws)] if ws else None
        return draw(rng, prompts, make, n)
    if cls == 5:
        def make(item, rng):
            ws = WORD.findall(item[1])
            if len(ws) < 4:
                return None
            i = rng.randrange(len(ws) - 3)
            return ['"%s"' % " ".join(ws[i:i + 4])]
        return draw(rng, prompts, make, n)
    raise ValueError(cls)


class Holders:
    """Which texts of a kind hold a query's every word: an inverted index over them."""

    def __init__(self, texts):
        self.sessions = [sid for sid, _ in texts]
        self.index = collections.defaultdict(set)
        for i, (_, text) in enumerate(texts):
            for w in set(w.lower() for w in WORD.findall(text)):
                self.index[w].add(i)

    def sessions_of(self, words):
        """The number of sessions that have a text holding every word of `words`."""
        ws = set(w.lower() for w in WORD.findall(" ".join(words)))
        held = set.intersection(*[self.index.get(w, set()) for w in ws]) if ws else set()
        return len({self.sessions[i] for i in held})


def fts_and(words):
    """The FTS5 expression `trail search` made of plain words and quoted phrases before issue
    43 (each term quoted, all ANDed)."""
    return " AND ".join('"%s"' % w.strip('"').replace('"', '""') for w in words)


def bm25_only(trail, store, words):
    """The top 10 turns' sessions by bm25 alone (`ORDER BY rank` over one row per turn): what
    `trail search` returned before issue 43, read through `trail sql`."""
    sql = ("SELECT d.session_id FROM turn_search t JOIN turn_docs d ON d.id = t.rowid "
           "WHERE turn_search MATCH '%s' ORDER BY rank LIMIT 10" % fts_and(words).replace("'", "''"))
    p = subprocess.run([trail, "--store", store, "--color", "never", "sql", "--json", sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("trail sql failed: %s" % p.stderr)
    return [{"session_id": r[0]} for r in json.loads(p.stdout)["rows"]]


def measure(trail, store, queries, holders=None, before=False):
    """(recall@10, MRR, median seconds, misses, share of queries held by <= 10 sessions, blind
    recall) of the queries."""
    found, rr, times, misses, few, blind = 0, 0.0, [], [], 0, 0.0
    for session, words in queries:
        held = max(holders.sessions_of(words), 1) if holders else 0
        few += 0 < held <= 10
        blind += min(1.0, 10.0 / held) if held else 0.0
        t = time.perf_counter()
        if before:
            hits = bm25_only(trail, store, words)
        else:
            p = subprocess.run([trail, "--store", store, "--color", "never", "search", "--json",
                                "--limit", "10", "--"] + words,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode not in (0, 1):
                sys.exit("trail search failed: %s" % p.stderr)
            hits = json.loads(p.stdout) if p.stdout.strip() else []
        times.append(time.perf_counter() - t)
        ranks = [i for i, h in enumerate(hits) if h["session_id"] == session]
        if ranks:
            found += 1
            rr += 1.0 / (ranks[0] + 1)
        else:
            misses.append("%s (%s)" % (" ".join(words), held or "-"))
    n = max(len(queries), 1)
    median = statistics.median(times) if times else 0.0
    return found / n, rr / n, median, misses, few / n, blind / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--seed", type=int, help="the queries' seed (default: a new one)")
    ap.add_argument("--classes", default="1,2,3,4,5,6")
    ap.add_argument("--misses", action="store_true", help="print the queries that missed")
    ap.add_argument("--bm25-only", action="store_true",
                    help="rank by bm25 alone, as trail search did before issue 43 (through trail sql)")
    ap.add_argument("--trail", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "trail"))
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 10**6)
    prompts, answers, outputs = texts_of(a.corpus)
    pdf, adf = doc_freq(prompts), doc_freq(answers)
    print("known-item search, seed %d: %d prompts, %d answers, %d tool outputs in the corpus; "
          "%d queries a class" % (seed, len(prompts), len(answers), len(outputs), a.queries))
    print("%-38s %7s %9s %6s %9s %8s %6s" % ("class", "queries", "recall@10", "MRR",
                                               "median ms", "<=10 ses", "blind"))
    kinds = {1: prompts, 2: prompts, 3: answers, 5: prompts, 6: prompts}
    holders = {}
    for cls in [int(c) for c in a.classes.split(",")]:
        rng = random.Random("%d/%d" % (seed, cls))
        queries = class_queries(cls, rng, a.queries, prompts, answers, outputs, pdf, adf)
        kind = id(kinds.get(cls))
        if cls in kinds and kind not in holders:
            holders[kind] = Holders(kinds[cls])
        recall, mrr, median, misses, few, blind = measure(a.trail, a.store, queries,
                                                          holders.get(kind), a.bm25_only)
        ambiguity = "%8.3f %6.3f" % (few, blind) if cls in kinds else "%8s %6s" % ("-", "-")
        print("%-38s %7d %9.3f %6.3f %9.1f %s" % (
            "%d. %s" % (cls, CLASSES[cls]), len(queries), recall, mrr, median * 1e3, ambiguity))
        if a.misses and misses:
            print("   missed (sessions holding every word): " + "; ".join(misses[:10]))


if __name__ == "__main__":
    main()
