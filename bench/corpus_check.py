#!/usr/bin/env python3
"""Issue 42's done-when check: every new agent's corpus folder indexed both ways.

usage: python3 bench/corpus_check.py --trail BIN [--corpus ../shared/corpus] [--keep]

For each corpus folder of the agents issue 42 added (pi qwen kimi droid kiro-cli mistral-vibe
antigravity hermes vs-copilot iflow traex), `trail` indexes it twice into scratch stores:

- by path: `trail --home EMPTY index --json <folder>` (each file detected by its content);
- by discovery: `trail --home H index --json` with nothing named, where H is a scratch home in
  which the folder's files are laid out, as symbolic links (nothing is copied), where the agent
  keeps them on Linux (the registry's Linux locations: `~/.pi/agent/sessions/...`,
  `~/.qwen/projects/<project>/chats/`, `~/.kimi-code/sessions/...`, ...).

It prints one table per source: files parsed, sessions, turns (prompts), tool calls, input and
output tokens and parse problems, for both ways, read from the index report and the store with
`trail sql`; and beside them counts the script makes itself from the files (plain JSON reads and
line scans, defined per source below; `-` where none is cheap). It exits 1, loudly, when the two
ways differ in any figure or either reports a parse problem or a failure. The independent counts
are shown for comparison; where their definition differs from trail's (a branch trail keeps off
the conversation, a repeated record trail counts once) they are marked `~`, not failed.

Hermes: the corpus's `*.rows.jsonl` are rows exported from `state.db`, not a file Hermes writes;
they are neither laid out nor read, and only `legacy-large.json` (Hermes' own legacy session
file) is, as `~/.hermes/sessions/session_<name>.json`.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CORPUS = os.path.join(ROOT, "..", "shared", "corpus")


# --------------------------------------------------------------------------------------------
# Layouts: corpus file -> path under the scratch home (the registry's Linux locations).

def each_file(pattern, to):
    def layout(folder):
        return [(p, to(os.path.basename(p))) for p in sorted(glob.glob(os.path.join(folder, pattern)))]
    return layout


def subtree(prefix):
    """The folder's own tree under `prefix` (the corpus keeps the agent's layout below it)."""
    def layout(folder):
        out = []
        for dirpath, _, names in os.walk(folder):
            for n in sorted(names):
                p = os.path.join(dirpath, n)
                out.append((p, os.path.join(prefix, os.path.relpath(p, folder))))
        return out
    return layout


def kimi_layout(folder):
    out = []
    for state in sorted(glob.glob(os.path.join(folder, "*.state.json"))):
        wire = state[: -len(".state.json")] + ".jsonl"
        with open(state, encoding="utf-8") as f:
            home = json.load(f)["agents"]["main"]["homedir"]
        session = home.split("/agents/")[0].rsplit("/", 1)[-1]
        base = f".kimi-code/sessions/wd_corpus/{session}"
        out += [(wire, f"{base}/agents/main/wire.jsonl"), (state, f"{base}/state.json")]
    return out


def traex_layout(folder):
    return [
        (p, ".trae/cli/sessions/2026/08/01/"
            "rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl")
        for p in sorted(glob.glob(os.path.join(folder, "*.jsonl")))
    ]


# --------------------------------------------------------------------------------------------
# Independent counts: (sessions, prompts, tool calls, input tokens, output tokens), None where
# not counted. Each says what it counts.

def lines(path):
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    v = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(v, dict):
                    yield v


def blocks(content):
    return content if isinstance(content, list) else []


def count_pi(folder):
    """Files with a `session` header; `message` lines of role user; `toolCall` blocks; the
    assistants' `usage.input`/`output`."""
    s = p = t = i = o = 0
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        for n, v in enumerate(lines(f)):
            if n == 0 and v.get("type") == "session":
                s += 1
            m = v.get("message") or {}
            if v.get("type") != "message":
                continue
            if m.get("role") == "user":
                p += 1
            if m.get("role") == "assistant":
                t += sum(1 for b in blocks(m.get("content")) if b.get("type") == "toolCall")
                u = m.get("usage") or {}
                i += u.get("input", 0) or 0
                o += u.get("output", 0) or 0
    return s, p, t, i, o


def count_qwen(folder):
    """Distinct `sessionId`s; `user` records that are prompts (no subtype, or one the agent or a
    queue sent; every branch, so `~` where a branch was abandoned); `functionCall` parts of
    assistant records."""
    prompt_subtypes = (None, "mid_turn_user_message", "notification", "cron",
                       "background_task_completed")
    ids, p, t = set(), 0, 0
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        for v in lines(f):
            if not v.get("isSidechain"):
                ids.add(v.get("sessionId"))
            if (v.get("type") == "user" and v.get("subtype") in prompt_subtypes
                    and not v.get("isSidechain")):
                p += 1
            if v.get("type") == "assistant":
                parts = (v.get("message") or {}).get("parts") or []
                t += sum(1 for x in parts if "functionCall" in x)
    return len(ids - {None}), p, t, None, None


def count_kimi(folder):
    """One session per wire log; `turn.prompt` lines; `tool.call` loop events."""
    s = p = t = 0
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        s += 1
        for v in lines(f):
            if v.get("type") == "turn.prompt":
                p += 1
            e = v.get("event") or {}
            if v.get("type") == "context.append_loop_event" and e.get("type") == "tool.call":
                t += 1
    return s, p, t, None, None


def count_droid(folder):
    """Files starting with `session_start`; user messages holding text (a string or a `text`
    block); `tool_use` blocks."""
    s = p = t = 0
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        for n, v in enumerate(lines(f)):
            if n == 0 and v.get("type") == "session_start":
                s += 1
            m = v.get("message") or {}
            c = m.get("content")
            if m.get("role") == "user" and (
                isinstance(c, str) or any(b.get("type") == "text" for b in blocks(c))
            ):
                p += 1
            t += sum(1 for b in blocks(c) if b.get("type") == "tool_use")
    return s, p, t, None, None


def count_kiro(folder):
    """One session per `.jsonl`; `Prompt` records; `toolUse` content items."""
    s = p = t = 0
    for f in glob.glob(os.path.join(folder, "sessions/cli/*.jsonl")):
        s += 1
        for v in lines(f):
            if v.get("kind") == "Prompt":
                p += 1
            content = (v.get("data") or {}).get("content")
            t += sum(1 for b in blocks(content) if b.get("kind") == "toolUse")
    return s, p, t, None, None


def count_vibe(folder):
    """One session per `messages.jsonl`; user lines not `injected` (a rewind replays one, so
    `~`); entries of `tool_calls`."""
    s = p = t = 0
    for f in glob.glob(os.path.join(folder, "logs/session/*/messages.jsonl")):
        s += 1
        for v in lines(f):
            if v.get("role") == "user" and not v.get("injected"):
                p += 1
            t += len(v.get("tool_calls") or [])
    return s, p, t, None, None


def count_antigravity(folder):
    """One session per `transcript.jsonl`; `USER_INPUT` steps."""
    s = p = 0
    for f in glob.glob(os.path.join(folder, "brain/*/.system_generated/logs/transcript.jsonl")):
        s += 1
        p += sum(1 for v in lines(f) if v.get("type") == "USER_INPUT")
    return s, p, None, None, None


def count_hermes(folder):
    """The legacy session JSON: one session, its `user` messages, its assistants'
    `tool_calls`."""
    with open(os.path.join(folder, "legacy-large.json"), encoding="utf-8") as f:
        v = json.load(f)
    msgs = v.get("messages") or []
    p = sum(1 for m in msgs if m.get("role") == "user")
    t = sum(len(m.get("tool_calls") or []) for m in msgs if m.get("role") == "assistant")
    return 1, p, t, None, None


def count_vs(folder):
    """Distinct `gen_ai.conversation.id` values; `invoke_agent` spans; `execute_tool` spans."""
    ids, p, t = set(), 0, 0
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        for v in lines(f):
            for rs in v.get("resourceSpans") or []:
                for ss in rs.get("scopeSpans") or []:
                    for span in ss.get("spans") or []:
                        name = span.get("name", "")
                        p += name.startswith("invoke_agent")
                        t += name.startswith("execute_tool")
                        for a in span.get("attributes") or []:
                            if a.get("key") == "gen_ai.conversation.id":
                                ids.add(json.dumps(a.get("value")))
    return len(ids), p, t, None, None


def count_iflow(folder):
    """One session per file; `user` records holding text; distinct `tool_use` ids; the
    assistants' `usage.input_tokens`/`output_tokens`."""
    s = p = i = o = 0
    calls = set()
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        s += 1
        for v in lines(f):
            m = v.get("message") or {}
            c = m.get("content")
            if v.get("type") == "user" and (
                isinstance(c, str) or any(b.get("type") == "text" for b in blocks(c))
            ):
                p += 1
            for b in blocks(c):
                if b.get("type") == "tool_use":
                    calls.add(b.get("id"))
            if v.get("type") == "assistant":
                u = m.get("usage") or {}
                i += u.get("input_tokens", 0) or 0
                o += u.get("output_tokens", 0) or 0
    return s, p, len(calls), i, o


def count_traex(folder):
    """One session per rollout; `user_message` events; `function_call` items."""
    s = p = t = 0
    for f in glob.glob(os.path.join(folder, "*.jsonl")):
        s += 1
        for v in lines(f):
            pl = v.get("payload") or {}
            p += v.get("type") == "event_msg" and pl.get("type") == "user_message"
            t += v.get("type") == "response_item" and pl.get("type") == "function_call"
    return s, p, t, None, None


# folder, source id, layout, independent counter
SOURCES = [
    ("pi", "pi", each_file("*.jsonl", lambda n: f".pi/agent/sessions/--corpus--/{n}"), count_pi),
    ("qwen", "qwen-code", each_file("*.jsonl", lambda n: f".qwen/projects/-corpus/chats/{n}"),
     count_qwen),
    ("kimi", "kimi", kimi_layout, count_kimi),
    ("droid", "droid", each_file("*.jsonl", lambda n: f".factory/sessions/-corpus/{n}"),
     count_droid),
    ("kiro-cli", "kiro", subtree(".kiro"), count_kiro),
    ("mistral-vibe", "mistral-vibe", subtree(".vibe"), count_vibe),
    ("antigravity", "antigravity", subtree(".gemini/antigravity"), count_antigravity),
    ("hermes", "hermes",
     each_file("legacy-large.json", lambda n: ".hermes/sessions/session_corpus_legacy_large.json"),
     count_hermes),
    ("vs-copilot", "visual-studio-copilot",
     each_file("*.jsonl", lambda n: f".cache/VSGitHubCopilotLogs/traces/{n}"), count_vs),
    ("iflow", "iflow", each_file("*.jsonl", lambda n: f".iflow/projects/-corpus/{n}"), count_iflow),
    ("traex", "traex", traex_layout, count_traex),
]


# --------------------------------------------------------------------------------------------
# trail, both ways.

def trail_json(binary, store, home, args):
    cmd = [binary, "--store", store, "--home", home, "--color", "never", *args]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return json.loads(r.stdout)


def sql_one(binary, store, home, query):
    v = trail_json(binary, store, home, ["sql", query, "--json"])
    return v["rows"][0][0] or 0


def figures(binary, store, home, source, report):
    q = lambda s: sql_one(binary, store, home, s.replace("$S", f"'{source}'"))
    return {
        "files": report["files_parsed"],
        "sessions": q("SELECT count(*) FROM sessions WHERE source = $S"),
        "turns": q("SELECT sum(turn_count) FROM sessions WHERE source = $S"),
        "tool calls": q("SELECT count(*) FROM messages m JOIN sessions s ON s.id = m.session_id"
                        " WHERE s.source = $S AND m.kind = 'tool_call'"),
        "input tokens": q("SELECT sum(u.input_tokens) FROM usage u JOIN sessions s"
                          " ON s.id = u.session_id WHERE s.source = $S"),
        "output tokens": q("SELECT sum(u.output_tokens) FROM usage u JOIN sessions s"
                           " ON s.id = u.session_id WHERE s.source = $S"),
        "problems": len(report["issues"]) + len(report.get("failures", [])),
        "other sources": q("SELECT count(*) FROM sessions WHERE source <> $S"),
    }


def index_both_ways(binary, scratch, folder, source, layout):
    empty = os.path.join(scratch, "empty-home")
    os.makedirs(empty, exist_ok=True)
    by_path_store = os.path.join(scratch, "by-path.db")
    report = trail_json(binary, by_path_store, empty, ["index", "--json", folder])
    by_path = figures(binary, by_path_store, empty, source, report)

    home = os.path.join(scratch, "home")
    for src, rel in layout(folder):
        dest = os.path.join(home, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.symlink(os.path.abspath(src), dest)
    os.makedirs(home, exist_ok=True)
    found_store = os.path.join(scratch, "discovered.db")
    report = trail_json(binary, found_store, home, ["index", "--json"])
    found = figures(binary, found_store, home, source, report)
    return by_path, found, report


def show(folder, source, by_path, found, independent):
    keys = ["files", "sessions", "turns", "tool calls", "input tokens", "output tokens",
            "problems", "other sources"]
    own = dict(zip(["sessions", "turns", "tool calls", "input tokens", "output tokens"],
                   independent))
    print(f"\n{folder} ({source})")
    print(f"  {'':14} {'by path':>10} {'discovered':>11} {'independent':>12}")
    bad = []
    for k in keys:
        a, b = by_path[k], found[k]
        mark = "" if a == b else "  <-- DIFFERS"
        if a != b or (k in ("problems", "other sources") and (a or b)):
            bad.append(k)
        ind = own.get(k)
        ind_s = "-" if ind is None else (str(ind) if ind == a else f"~{ind}")
        print(f"  {k:14} {a:>10} {b:>11} {ind_s:>12}{mark}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trail", required=True, help="the trail binary to check")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = ap.parse_args()
    binary = os.path.abspath(args.trail)
    failed = []
    base = tempfile.mkdtemp(prefix="trail-corpus-check-")
    for folder, source, layout, count in SOURCES:
        path = os.path.join(args.corpus, folder)
        if not os.path.isdir(path):
            print(f"\n{folder}: MISSING corpus folder {path}")
            failed.append((folder, ["missing"]))
            continue
        scratch = os.path.join(base, folder)
        os.makedirs(scratch)
        by_path, found, _ = index_both_ways(binary, scratch, path, source, layout)
        bad = show(folder, source, by_path, found, count(path))
        if bad:
            failed.append((folder, bad))
    if not args.keep:
        subprocess.run(["rm", "-rf", base], check=False)
    else:
        print(f"\nscratch kept in {base}")
    print()
    if failed:
        for folder, bad in failed:
            print(f"FAIL {folder}: {', '.join(bad)}", file=sys.stderr)
        sys.exit(1)
    print(f"OK: {len(SOURCES)} corpus folders, both ways equal, no parse problem")


if __name__ == "__main__":
    main()
