#!/usr/bin/env python3
"""Generates large histories of the other agents for trail's benchmarks, by scaling the real
files of the shared corpus (read in place from ../shared/corpus; nothing is copied into the repo).

usage: gen_sources.py OUT FORMAT [--mib N] [--sessions N] [--seed S]

FORMAT:
  vscode   OUT/Code/User/workspaceStorage/<hash>/chatSessions/<uuid>.json: --sessions VS Code
           chat sessions (version 3) whose requests are real requests from the corpus's
           Export Chat files, sampled and repeated.
  copilot  OUT/.copilot/session-state/<uuid>/events.jsonl: one events.jsonl of --mib MiB,
           repeating the corpus log's first turn (prompt, tool call, answer) with fresh ids, and
           every 20th time all of its events (subagent, resumes, errors...).
  codex    OUT/.codex/sessions/2026/01/01/rollout-...-<uuid>.jsonl: one rollout of --mib MiB
           repeating the corpus rollout's turns with fresh call ids and growing token totals.
  gemini   OUT/.gemini/tmp/<project>/chats/session-*.json: --mib MiB of chat files built
           from the corpus chat's messages, with ids unique per session and tool output (in
           both of the fields Gemini CLI writes it to) as most of the bytes.
  cline    OUT/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/<ms>/ui_messages.json:
           --mib MiB of Cline tasks, each the corpus task's records (prompt, tool rows,
           api_req_started requests with their tool results, checkpoints, reasoning) repeated
           a random number of times with fresh times.

  aider    OUT/projects/p<k>/.aider.chat.history.md (+ .aider.input.history): --mib MiB over 40
           projects, repeating the corpus history's run with fresh times, a sentence of its own
           in each answer, and its SEARCH/REPLACE edits, token and cost lines and commits.
  claude-history
           OUT/.claude/history.jsonl: --mib MiB of Claude Code prompt-history lines (sessions of
           5 to 40 prompts, one line in ten without a session id, one in twenty with a paste),
           no transcripts beside it (all deleted, so every prompt is indexed).
  vscode-legacy
           OUT/Code/User/workspaceStorage/<hash>/state.vscdb: --mib MiB of workspace databases
           whose `interactive.sessions` holds up to 25 sessions each, built like `vscode`.

Deterministic: the same arguments write the same bytes.
"""
import argparse
import copy
import datetime
import json
import os
import random
import uuid

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus")


def uid(r):
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def ts(base, i):
    s = base + i
    return "2026-01-%02dT%02d:%02d:%02d.000Z" % (1 + (s // 86400) % 28, (s // 3600) % 24, (s // 60) % 60, s % 60)


def vscode(out, sessions, r):
    exports = sorted(os.listdir(os.path.join(CORPUS, "vscode-export")))
    requests = []
    for name in exports:
        with open(os.path.join(CORPUS, "vscode-export", name), encoding="utf-8") as f:
            requests.append(json.load(f)["requests"])
    total = 0
    for i in range(sessions):
        h = "%032x" % r.getrandbits(128)
        d = os.path.join(out, "Code", "User", "workspaceStorage", h)
        os.makedirs(os.path.join(d, "chatSessions"), exist_ok=True)
        with open(os.path.join(d, "workspace.json"), "w") as f:
            json.dump({"folder": "file:///home/u/project-%d" % (i % 50)}, f)
        src = requests[r.randrange(len(requests))]
        n = max(1, min(len(src), int(r.lognormvariate(1.2, 0.8))))
        start = r.randrange(max(1, len(src) - n + 1))
        reqs = []
        for k, req in enumerate(src[start:start + n] * r.choice((1, 1, 2))):
            req = copy.copy(req)
            req["requestId"] = "request_" + uid(r)
            req["timestamp"] = 1767225600000 + i * 3600000 + k * 60000
            reqs.append(req)
        sid = uid(r)
        doc = {"version": 3, "sessionId": sid, "creationDate": reqs[0]["timestamp"],
               "lastMessageDate": reqs[-1]["timestamp"], "requesterUsername": "dev",
               "responderUsername": "GitHub Copilot", "initialLocation": "panel", "requests": reqs}
        p = os.path.join(d, "chatSessions", sid + ".json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
        total += os.path.getsize(p)
    return total


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def copilot(out, mib, r):
    events = lines_of(os.path.join(CORPUS, "copilot-cli", "agentsessions-fixture-copilot-cli-small.jsonl"))
    start = [e for e in events if e.get("type") == "session.start"][:1]
    body = [e for e in events if e.get("type") not in ("session.start", "session.shutdown")]
    # A turn as real logs are mostly made of: the corpus's first prompt through its turn_end.
    first = next(i for i, e in enumerate(body) if e.get("type") == "user.message")
    end = next(i for i, e in enumerate(body) if e.get("type") == "assistant.turn_end")
    turn = body[first:end + 1]
    sid = uid(r)
    d = os.path.join(out, ".copilot", "session-state", sid)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "events.jsonl")
    target = mib * 2**20
    size, n, parent = 0, 0, None
    with open(path, "w", encoding="utf-8") as f:
        for e in start:
            e = copy.deepcopy(e)
            e["data"]["sessionId"] = sid
            f.write(json.dumps(e) + "\n")
        rep = 0
        while size < target:
            ids = {}
            # Every 20th repeat replays every other event of the corpus log too (errors, a
            # subagent, resumes, a truncation...), so each kind is exercised at a plausible rate.
            for e in body if rep % 20 == 0 else turn:
                e = copy.deepcopy(e)
                n += 1
                e["id"] = "ev-%d" % n
                e["parentId"] = parent
                parent = e["id"]
                e["timestamp"] = ts(0, n)
                data = e.get("data")
                if isinstance(data, dict):
                    for key in ("toolCallId", "messageId", "parentToolCallId"):
                        if key in data:
                            data[key] = ids.setdefault(data[key], "%s-%d" % (data[key], rep))
                    for req in data.get("toolRequests") or []:
                        if isinstance(req, dict) and "toolCallId" in req:
                            req["toolCallId"] = ids.setdefault(req["toolCallId"], "%s-%d" % (req["toolCallId"], rep))
                    res = data.get("result")
                    if isinstance(res, dict) and isinstance(res.get("content"), str):
                        res["content"] += "\n" + filler(r, r.randint(500, 6000))
                s = json.dumps(e) + "\n"
                f.write(s)
                size += len(s.encode("utf-8"))
            rep += 1
    return os.path.getsize(path)


WORDS = ("the build failed because the parser reads a stale cache entry when the session "
         "file grows while the index is running so we retry after the lock is released").split()


def filler(r, n):
    out, k = [], 0
    while k < n:
        w = r.choice(WORDS)
        out.append(w)
        k += len(w) + 1
    return " ".join(out)


def codex(out, mib, r):
    lines = lines_of(os.path.join(CORPUS, "codex", "agentsessions-fixture-codex-0.146.jsonl"))
    meta = next(l for l in lines if l["type"] == "session_meta")
    body = [l for l in lines if l["type"] in ("response_item", "event_msg", "turn_context")]
    sid = str(uuid.UUID(int=r.getrandbits(128)))
    d = os.path.join(out, ".codex", "sessions", "2026", "01", "01")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "rollout-2026-01-01T00-00-00-%s.jsonl" % sid)
    target = mib * 2**20
    size, n, rep, totals = 0, 0, 0, [0, 0, 0, 0]
    with open(path, "w", encoding="utf-8") as f:
        m = copy.deepcopy(meta)
        m["payload"]["id"] = sid
        m["payload"]["session_id"] = sid
        m["timestamp"] = ts(0, 0)
        f.write(json.dumps(m) + "\n")
        while size < target:
            for l in body:
                l = copy.deepcopy(l)
                n += 1
                l["timestamp"] = ts(0, n)
                p = l.get("payload") or {}
                if isinstance(p, dict):
                    if "call_id" in p:
                        p["call_id"] = "%s-%d" % (p["call_id"], rep)
                    if p.get("type") in ("function_call_output", "custom_tool_call_output") and isinstance(p.get("output"), str):
                        p["output"] += "\n" + filler(r, r.randint(500, 6000))
                    if p.get("type") == "token_count":
                        inc = [r.randint(1000, 20000), r.randint(0, 15000), r.randint(50, 2000), r.randint(0, 500)]
                        totals = [a + b for a, b in zip(totals, inc)]
                        p["info"] = {"total_token_usage": {"input_tokens": totals[0] + totals[1], "cached_input_tokens": totals[1],
                                                           "output_tokens": totals[2] + totals[3], "reasoning_output_tokens": totals[3],
                                                           "total_tokens": sum(totals)},
                                     "last_token_usage": {"input_tokens": inc[0] + inc[1], "cached_input_tokens": inc[1],
                                                          "output_tokens": inc[2] + inc[3], "reasoning_output_tokens": inc[3],
                                                          "total_tokens": sum(inc)}}
                s = json.dumps(l) + "\n"
                f.write(s)
                size += len(s.encode("utf-8"))
            rep += 1
    return os.path.getsize(path)


def gemini(out, mib, r):
    with open(os.path.join(CORPUS, "gemini", "agentsessions-fixture-gemini-chat.json"), encoding="utf-8") as f:
        chat = json.load(f)
    d = os.path.join(out, ".gemini", "tmp", "bench-project", "chats")
    os.makedirs(d, exist_ok=True)
    target = mib * 2**20
    total, i = 0, 0
    while total < target:
        doc = copy.deepcopy(chat)
        doc["sessionId"] = uid(r)
        tag = doc["sessionId"][:8]
        msgs = []
        for rep in range(r.randint(20, 120)):
            for m in chat["messages"]:
                m = copy.deepcopy(m)
                # Ids are unique per session, as Gemini CLI's own are (random UUIDs).
                m["id"] = "%s-%s-%d" % (m.get("id", "m"), tag, rep)
                if isinstance(m.get("content"), str) and m.get("type") in ("gemini", "model"):
                    m["content"] += " " + filler(r, r.randint(100, 1500))
                for call in m.get("toolCalls") or []:
                    call["id"] = "%s-%s-%d" % (call.get("id", "c"), tag, rep)
                    # Most of a real history's bytes are tool output, which Gemini CLI writes
                    # twice: once for display and once in the function response.
                    out_text = filler(r, r.randint(500, 6000))
                    call["resultDisplay"] = out_text
                    for res in call.get("result") or []:
                        resp = (res.get("functionResponse") or {}).get("response")
                        if isinstance(resp, dict) and isinstance(resp.get("output"), str):
                            resp["output"] += "\n" + out_text
                msgs.append(m)
        doc["messages"] = msgs
        p = os.path.join(d, "session-2026-01-01T00-%02d-%s.json" % (i % 60, tag))
        with open(p, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
        total += os.path.getsize(p)
        i += 1
    return total


def aider(out, mib, r):
    with open(os.path.join(CORPUS, "aider", "metadata-aider.chat.history.md"), encoding="utf-8") as f:
        text = f.read()
    header = "# aider chat started at "
    body = text.split(header, 1)[1].split("\n", 1)[1]
    # The run as lines; answers (lines outside #### / > ) get prose added at their end.
    lines = body.split("\n")
    target = mib * 2**20
    total, run = 0, 0
    projects = 40
    files = [None] * projects
    inputs = [None] * projects
    try:
        while total < target:
            k = run % projects
            if files[k] is None:
                d = os.path.join(out, "projects", "p%02d" % k)
                os.makedirs(d, exist_ok=True)
                files[k] = open(os.path.join(d, ".aider.chat.history.md"), "w", encoding="utf-8")
                inputs[k] = open(os.path.join(d, ".aider.input.history"), "w", encoding="utf-8")
            t = 1767225600 + run * 7200
            stamp = lambda s: datetime.datetime.fromtimestamp(s, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
            chunk = ["", header + stamp(t), ""]
            prompt, n = [], 0
            for i, l in enumerate(lines):
                if l.startswith("####"):
                    if not prompt:
                        n += 1
                    line = l if len(l) < 6 else "%s (run %d)  " % (l.rstrip(), run) if not prompt else l
                    prompt.append(line)
                    chunk.append(line)
                    continue
                if prompt:
                    typed = "\n".join(p[5:].rstrip() if p.startswith("#### ") else "" for p in prompt)
                    inputs[k].write("\n# %s.%06d\n" % (stamp(t + 60 * n), n))
                    for pl in typed.split("\n"):
                        inputs[k].write("+" + pl + "\n")
                    prompt = []
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                chunk.append(l)
                if l.strip() and not l.startswith(">") and nxt.startswith("> Tokens:") is False and nxt == "" \
                        and i + 2 < len(lines) and lines[i + 2].startswith("> Tokens:"):
                    chunk.append("")
                    # A sentence of its own per answer; the rest keeps the corpus's proportions
                    # of prose, edit blocks and status lines.
                    chunk.append(filler(r, r.randint(40, 200)))
            s = "\n".join(chunk) + "\n"
            files[k].write(s)
            total += len(s.encode("utf-8"))
            run += 1
    finally:
        for f in files + inputs:
            if f is not None:
                f.close()
    return total


def claude_history(out, mib, r):
    d = os.path.join(out, ".claude")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "history.jsonl")
    target = mib * 2**20
    size, t = 0, 1767225600000
    with open(path, "w", encoding="utf-8") as f:
        while size < target:
            sid = uid(r)
            project = "/home/u/project-%d" % r.randrange(30)
            for _ in range(r.randint(5, 40)):
                t += r.randint(5000, 900000)
                text = filler(r, int(r.lognormvariate(4.5, 1.0)) + 5)
                line = {"display": text, "pastedContents": {}, "timestamp": t, "project": project}
                if r.random() < 0.05:
                    line["display"] = text + " [Pasted text #1 +%d lines]" % r.randint(3, 80)
                    line["pastedContents"] = {"1": {"id": 1, "type": "text", "content": filler(r, r.randint(500, 8000))}}
                if r.random() >= 0.1:
                    line["sessionId"] = sid
                s = json.dumps(line, ensure_ascii=False) + "\n"
                f.write(s)
                size += len(s.encode("utf-8"))
    return os.path.getsize(path)


def vscode_legacy(out, mib, r):
    import sqlite3
    exports = sorted(os.listdir(os.path.join(CORPUS, "vscode-export")))
    requests = []
    for name in exports:
        with open(os.path.join(CORPUS, "vscode-export", name), encoding="utf-8") as f:
            requests.append(json.load(f)["requests"])
    target = mib * 2**20
    total, w = 0, 0
    while total < target:
        h = "%032x" % r.getrandbits(128)
        d = os.path.join(out, "Code", "User", "workspaceStorage", h)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "workspace.json"), "w") as f:
            json.dump({"folder": "file:///home/u/project-%d" % (w % 50)}, f)
        sessions = []
        for i in range(r.randint(3, 25)):
            src = requests[r.randrange(len(requests))]
            n = max(1, min(len(src), int(r.lognormvariate(1.2, 0.8))))
            start = r.randrange(max(1, len(src) - n + 1))
            reqs = []
            for k, req in enumerate(src[start:start + n]):
                req = copy.copy(req)
                req["requestId"] = "request_" + uid(r)
                req["timestamp"] = 1704067200000 + w * 86400000 + i * 3600000 + k * 60000
                reqs.append(req)
            sessions.append({"version": 2, "sessionId": uid(r), "creationDate": reqs[0]["timestamp"],
                             "lastMessageDate": reqs[-1]["timestamp"], "requesterUsername": "dev",
                             "responderUsername": "GitHub Copilot", "initialLocation": "panel", "requests": reqs})
        value = json.dumps(sessions, ensure_ascii=False)
        db = os.path.join(d, "state.vscdb")
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        con.execute("INSERT INTO ItemTable VALUES ('interactive.sessions', ?)", (value,))
        con.execute("INSERT INTO ItemTable VALUES ('workbench.panel.chat', '{}')")
        con.commit()
        con.close()
        total += os.path.getsize(db)
        w += 1


def cline(out, mib, r):
    with open(os.path.join(CORPUS, "cline", "clinexray-ui_messages.json"), encoding="utf-8") as f:
        records = json.load(f)
    tasks = os.path.join(out, "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks")
    target = mib * 2**20
    total, i = 0, 0
    base = 1767225600000
    while total < target:
        ts = base + i * 3_600_000
        doc = []
        for rep in range(r.randint(1, 6)):
            for rec in records:
                rec = copy.deepcopy(rec)
                # The task opens once; repeats go on as the user's feedback.
                if rep > 0 and rec.get("say") == "task":
                    rec["say"] = "user_feedback"
                rec["ts"] = ts
                ts += r.randint(50, 4000)
                doc.append(rec)
        d = os.path.join(tasks, str(base + i))
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, "ui_messages.json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
        total += os.path.getsize(p)
        i += 1
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("format", choices=("vscode", "copilot", "codex", "gemini", "aider", "claude-history",
                                       "vscode-legacy", "cline"))
    ap.add_argument("--mib", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    r = random.Random(a.seed)
    if a.format == "vscode":
        n = vscode(a.out, a.sessions, r)
    else:
        n = {"copilot": copilot, "codex": codex, "gemini": gemini, "aider": aider,
             "claude-history": claude_history, "vscode-legacy": vscode_legacy, "cline": cline}[a.format](a.out, a.mib, r)
    print("%s: %d bytes (%.1f MiB) in %s" % (a.format, n, n / 2**20, a.out))


if __name__ == "__main__":
    main()
