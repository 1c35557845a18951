#!/usr/bin/env python3
"""Drives the real `trail mcp` over stdio with the official MCP Python SDK (`mcp` on PyPI).

usage: mcp_client.py --trail PATH/TO/trail --work EMPTY_DIR

Writes Claude Code sessions of its own into WORK/home (planted secrets, a session active a
minute ago, a session with a 10 MB tool output, two ids sharing a prefix), indexes them with
`trail index`, then checks every tool with valid and invalid input, resources and prompts, in
the 2026-07-28 protocol (server/discover) and in the initialize handshake older clients use.
Every answer is checked against the character cap and for the planted secrets.

Run by crates/trail-cli/tests/mcp.rs (which `cargo test` runs, and `.ci/run` installs `mcp`
for). Prints one line per check group; exits non-zero on the first failed assertion.
"""
import argparse
import asyncio
import datetime
import hashlib
import json
import os
import subprocess
import sys
import uuid

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

CAP = 20_000

# Secrets planted in the sessions: none may appear in any answer while redaction is on.
GITHUB = "ghp_" + "R7x2Kq9LmN4pZ8vB1cD6fG3hJ5kW0sT2yU4e"
AWS = "AKIA" + "Q4ZT7XW2MNB8RC5D"
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
PASSWORD_VALUE = "hunter2hunter2xyz"
SECRETS = [GITHUB, AWS, ANTHROPIC, PASSWORD_VALUE]

OLD = "aaaa1111-0000-4000-8000-000000000001"
OLD2 = "aaaa2222-0000-4000-8000-000000000002"
ACTIVE = "bbbb3333-0000-4000-8000-000000000003"
BIG = "cccc4444-0000-4000-8000-000000000004"
FRESH = "dddd5555-0000-4000-8000-000000000005"
PROJECT = "/work/proj"
EDITED = PROJECT + "/src/parser.rs"


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


class Session:
    """Writes one Claude Code JSONL session, line by line, the way Claude Code does."""

    def __init__(self, sid, start):
        self.sid = sid
        self.t = start
        self.parent = None
        self.lines = []
        self.n = 0

    def _add(self, kind, message, **extra):
        self.n += 1
        self.t += datetime.timedelta(seconds=5)
        uid = "%s-%04d" % (self.sid[:8], self.n)
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": PROJECT,
            "sessionId": self.sid,
            "version": "2.1.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": iso(self.t),
            "message": message,
        }
        line.update(extra)
        self.lines.append(line)
        self.parent = uid

    def user(self, text):
        self._add("user", {"role": "user", "content": text})

    def assistant(self, content):
        self._add(
            "assistant",
            {
                "id": "msg_%s_%d" % (self.sid[:4], self.n),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": content,
                "stop_reason": None,
                "usage": {"input_tokens": 100, "output_tokens": 50,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            },
            requestId="req_%s_%d" % (self.sid[:4], self.n),
        )

    def text(self, text):
        self.assistant([{"type": "text", "text": text}])

    def tool(self, name, tool_input, output, is_error=False):
        call_id = "toolu_%s_%d" % (self.sid[:4], self.n + 1)
        self.assistant([{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}])
        self._add("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": is_error}]})

    def write(self, home):
        folder = os.path.join(home, ".claude", "projects", "-work-proj")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, self.sid + ".jsonl"), "w") as f:
            for line in self.lines:
                f.write(json.dumps(line) + "\n")


def big_output():
    rows = ["row %07d value ok %s" % (i, "abcdefghij"[i % 10] * (i % 7)) for i in range(520_000)]
    text = "\n".join(rows)
    assert len(text.encode()) >= 10_000_000, len(text)
    return text


def write_fixtures(home):
    now = datetime.datetime.now(datetime.timezone.utc)
    s = Session(OLD, now - datetime.timedelta(days=3))
    s.user("The flaky parser test fails on CI; fix it. Use my token %s if you need the API." % GITHUB)
    s.tool("Edit", {"file_path": EDITED, "old_string": "let n = 0;", "new_string": "let n = 1;"},
           "The file %s has been updated." % EDITED)
    s.tool("Bash", {"command": "cargo test -p parser", "description": "Run the parser tests"},
           "test parser::flaky ... ok\naws key in env: %s" % AWS)
    s.text("Fixed the flaky parser test. I read PASSWORD=%s from .env to run it." % PASSWORD_VALUE)
    s.user("Also look at the lexer tokens.")
    s.text("The lexer is fine. (key %s was in the config)" % ANTHROPIC)
    s.write(home)

    s = Session(OLD2, now - datetime.timedelta(days=2))
    s.user("Rename the lexer tokens module.")
    s.text("Renamed lexer tokens to lexemes.")
    s.write(home)

    s = Session(ACTIVE, now - datetime.timedelta(minutes=1, seconds=20))
    s.user("Plan the zebracorn migration.")
    s.text("Here is the zebracorn migration plan.")
    s.write(home)

    big = big_output()
    s = Session(BIG, now - datetime.timedelta(days=1))
    s.user("Dump the whole table.")
    s.tool("Bash", {"command": "cat table.txt"}, big)
    s.text("That is the whole table.")
    s.write(home)
    return big


class Checker:
    """Calls tools and keeps every answer, to check the cap and the secrets over all of them."""

    def __init__(self, client, cap=CAP):
        self.client = client
        self.cap = cap
        self.seen = []

    def keep(self, *texts):
        self.seen.extend(texts)

    async def call(self, name, args, ok=True):
        r = await self.client.call_tool(name, args)
        text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        sc = r.structured_content
        size = len(text) + (len(json.dumps(sc, ensure_ascii=False, separators=(",", ":"))) if sc is not None else 0)
        assert size <= self.cap, "%s %s: %d characters > cap %d" % (name, args, size, self.cap)
        self.keep(text, json.dumps(sc, ensure_ascii=False) if sc is not None else "")
        if ok:
            assert not r.is_error, "%s %s failed: %s" % (name, args, text)
            assert isinstance(sc, dict), "%s: no structured content" % name
            assert sc["store"]["last_indexed_at"], "%s: no freshness" % name
            assert "Store last indexed:" in text, "%s: text without freshness line" % name
        else:
            assert r.is_error, "%s %s should fail, got: %s" % (name, args, text[:300])
        return text, sc

    async def error(self, name, args, *words):
        text, _ = await self.call(name, args, ok=False)
        for w in words:
            assert w.lower() in text.lower(), "%s %s: %r not in %r" % (name, args, w, text)
        return text

    def no_secrets(self):
        blob = "\n".join(self.seen)
        for s in SECRETS:
            assert s not in blob, "secret %s... leaked" % s[:8]
        assert "[REDACTED:" in blob, "nothing was redacted"


def file_hash(path):
    h = hashlib.sha256()
    for p in (path, path + "-wal"):
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


SQL_ATTACKS = [
    "DELETE FROM sessions",
    "UPDATE sessions SET summary = 'x'",
    "INSERT INTO sessions(id) VALUES ('x')",
    "REPLACE INTO sessions(id) VALUES ('x')",
    "DROP TABLE sessions",
    "CREATE TABLE evil(x)",
    "CREATE TEMP TABLE evil(x)",
    "ALTER TABLE sessions ADD COLUMN evil TEXT",
    "ATTACH DATABASE '{work}/evil.db' AS evil",
    "ATTACH DATABASE 'file:{work}/evil2.db?mode=rwc' AS evil",
    "DETACH DATABASE main",
    "PRAGMA writable_schema = ON",
    "PRAGMA user_version = 99",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA query_only = 0",
    "VACUUM",
    "VACUUM INTO '{work}/evil-copy.db'",
    "REINDEX",
    "ANALYZE",
    "SELECT load_extension('{work}/evil.so')",
    "WITH x AS (SELECT 1) DELETE FROM sessions",
    "WITH x AS (SELECT 'y') INSERT INTO sessions(id) SELECT * FROM x",
    "SELECT 1; DELETE FROM sessions",
    "SELECT count(*) FROM sessions; PRAGMA writable_schema = 1",
    "UPDATE messages SET text = 'x' RETURNING seq",
    "INSERT INTO search_index(search_index) VALUES ('delete-all')",
    "SELECT writefile('{work}/evil.txt', 'x')",
    "SELECT readfile('/etc/passwd')",
    "BEGIN IMMEDIATE",
    "SAVEPOINT s",
]


async def main_checks(a, store, home, big):
    server = StdioServerParameters(
        command=a.trail, args=["--store", store, "--home", home, "mcp", "--no-refresh"])
    async with Client(server) as client:
        c = Checker(client)
        assert client.protocol_version == "2026-07-28", client.protocol_version

        # tools/list: nine tools, schemas, hints.
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"search", "list_sessions", "get_session", "file_history",
                              "session_diff", "sql", "report", "index", "continue_session"}, sorted(tools)
        for name, t in tools.items():
            assert t.input_schema["type"] == "object", name
            assert t.output_schema and t.output_schema["type"] == "object", name
            writes = name in ("index", "continue_session")
            assert t.annotations.read_only_hint is (not writes), name
            assert t.annotations.destructive_hint is False, name
        assert tools["search"].input_schema["required"] == ["query"]
        assert tools["get_session"].input_schema["required"] == ["id"]
        assert "sessions(" in tools["sql"].description and "turns(" in tools["sql"].description
        assert tools["session_diff"].input_schema["required"] == ["session_id"]
        print("tools/list: 9 tools with schemas and hints")

        # search
        text, sc = await c.call("search", {"query": "flaky parser"})
        assert sc["hits"], text
        hit = sc["hits"][0]
        assert hit["session_id"].endswith(OLD) and hit["agent"] == "claude-code", hit
        assert "**" in hit["snippet"] and "get_session" in hit["open"], hit
        assert sc["corrected"] is None, sc
        # A misspelled word: the hits are the near spelling's, and the field says so.
        text, sc = await c.call("search", {"query": "flakey parser"})
        assert sc["hits"] and sc["hits"][0]["session_id"].endswith(OLD), text
        assert sc["corrected"]["query"] == "flaky parser", sc["corrected"]
        assert sc["corrected"]["words"] == [{"given": "flakey", "searched": "flaky"}], sc
        assert sc["corrected"]["no_match"] is True, sc
        assert sc["corrected"]["message"] == 'no match for "flakey"; showing "flaky"', sc
        assert 'no match for "flakey"; showing "flaky"' in text, text
        text, sc = await c.call("search", {"query": "flakey parser", "exact": True})
        assert sc["hits"] == [] and sc["corrected"] is None, sc
        text, sc = await c.call("search", {"query": "zebracorn"})
        assert sc["hits"] == [], sc
        assert "active in the last 10 minutes" in sc["note"], sc["note"]
        text, sc = await c.call("search", {"query": "zebracorn", "include_active": True})
        assert [h["session_id"].endswith(ACTIVE) for h in sc["hits"]] == [True], sc["hits"]
        active_id = sc["hits"][0]["session_id"]
        text, sc = await c.call("search", {"query": "zebracorn", "include_active": True,
                                           "exclude_session": active_id})
        assert sc["hits"] == [], sc
        text, sc = await c.call("search", {"query": "lexer", "source": "codex"})
        assert sc["hits"] == [] and "source=codex" in sc["note"], sc["note"]
        await c.error("search", {}, "query")
        await c.error("search", {"query": "x", "limit": "ten"}, "invalid")
        await c.error("search", {"query": "x", "role": "robot"}, "role")
        await c.error("search", {"query": "x", "since": "last tuesday"})
        await c.error("search", {"query": "x", "bogus": 1}, "unknown field")
        print("search: hits, a misspelled word corrected, active sessions left out and found, "
              "own session skipped, errors")

        # list_sessions
        text, sc = await c.call("list_sessions", {"limit": 2})
        assert len(sc["sessions"]) == 2 and sc["next_cursor"], sc
        first = [s["id"] for s in sc["sessions"]]
        text, sc = await c.call("list_sessions", {"limit": 2, "cursor": sc["next_cursor"]})
        second = [s["id"] for s in sc["sessions"]]
        ids = first + second
        assert len(set(ids)) == 4, ids
        assert any(i.endswith(BIG) for i in ids) and any(i.endswith(ACTIVE) for i in ids)
        text, sc = await c.call("list_sessions", {"source": "gemini-cli"})
        assert sc["sessions"] == [] and "source=gemini-cli" in sc["note"], sc
        await c.error("list_sessions", {"cursor": "zz"}, "cursor")
        await c.error("list_sessions", {"source": "emacs"}, "unknown source")
        await c.error("list_sessions", {"limit": -1}, "invalid")
        print("list_sessions: pages with a cursor, filters, errors")

        # get_session
        old_id = next(i for i in ids if i.endswith(OLD))
        text, sc = await c.call("get_session", {"id": old_id})
        assert sc["session"]["id"] == old_id and sc["session"]["turns"] == 2, sc["session"]
        kinds = [m["kind"] for m in sc["messages"]]
        assert "tool_call" in kinds and sc["next_cursor"] is None, kinds
        edit = next(m for m in sc["messages"] if m["tool"] == "Edit" and m["kind"] == "tool_call")
        assert edit["summary"] == EDITED and edit["tool_input"] is None and edit["tool_input_bytes"] > 0, edit
        assert "[REDACTED:" in text, "get_session did not redact"
        text, sc = await c.call("get_session", {"id": "bbbb3333", "tool_io": True})
        assert sc["session"]["id"].endswith(ACTIVE), sc["session"]
        text, sc = await c.call("get_session", {"id": old_id, "from_turn": 1, "to_turn": 1, "tool_io": True})
        assert {m["turn"] for m in sc["messages"]} == {1}, sc["messages"]
        await c.error("get_session", {"id": "aaaa"}, "matches 2 sessions")
        await c.error("get_session", {"id": "nosuchsession"}, "no session")
        await c.error("get_session", {"id": old_id, "from_turn": 99}, "turn")
        await c.error("get_session", {"id": old_id, "cursor": "garbage"}, "cursor")
        await c.error("get_session", {}, "id")
        await c.error("get_session", {"id": 12}, "invalid")
        print("get_session: exact id, prefix, turn range, tool_io, errors")

        # A 10 MB tool output, paged under the cap.
        big_id = next(i for i in ids if i.endswith(BIG))
        cursor, pages, pieces = None, 0, []
        while True:
            args = {"id": big_id, "tool_io": True}
            if cursor:
                args["cursor"] = cursor
            text, sc = await c.call("get_session", args)
            c.seen.pop()  # the 10 MB were checked for secrets once is enough; keep memory flat
            c.seen.pop()
            pages += 1
            for m in sc["messages"]:
                if m["kind"] == "tool_result" and m["tool_output"] is not None:
                    offset = m["part"]["offset"] if m["part"] else 0
                    got = sum(len(p.encode()) for p in pieces)
                    assert offset == got, "piece at %d after %d bytes" % (offset, got)
                    pieces.append(m["tool_output"])
            cursor = sc["next_cursor"]
            if not cursor:
                break
            assert pages < 5000, "paging does not end"
        assert "".join(pieces) == big, "the pages do not add up to the tool output"
        assert pages > 500, pages
        print("get_session: 10 MB tool output in %d pages, each under %d characters" % (pages, CAP))

        # file_history
        text, sc = await c.call("file_history", {"path": EDITED})
        assert sc["touches"], text
        t = sc["touches"][0]
        assert t["session_id"] == old_id and t["action"] == "edit" and t["tool"] == "Edit", t
        assert "flaky parser" in t["prompt"] and GITHUB not in t["prompt"], t
        text, sc = await c.call("file_history", {"path": "/work/proj/src/none.rs"})
        assert sc["touches"] == [] and sc["note"], sc
        await c.error("file_history", {}, "path")
        await c.error("file_history", {"path": 5}, "invalid")
        print("file_history: the edit, its prompt (redacted), empty and invalid")

        # session_diff: the Edit call's change as a unified diff, by file and by turn.
        text, sc = await c.call("session_diff", {"session_id": old_id})
        assert [f["path"] for f in sc["files"]] == [EDITED], sc
        change = sc["files"][0]["changes"][0]
        assert change["source"] == "Edit" and change["kind"] == "modified", change
        assert change["diff"].endswith("-let n = 0;\n+let n = 1;\n"), change["diff"]
        assert sc["added"] == 1 and sc["removed"] == 1, sc
        assert "-let n = 0;" in text, text
        text, sc = await c.call("session_diff", {"session_id": old_id, "path": "src/parser.rs"})
        assert len(sc["files"]) == 1, sc
        text, sc = await c.call("session_diff", {"session_id": old_id, "turn": 99})
        assert sc["files"] == [] and sc["note"], sc
        await c.error("session_diff", {}, "session_id")
        await c.error("session_diff", {"session_id": "no-such-session"}, "no-such-session")
        print("session_diff: the edit as a unified diff, by path, empty turn and invalid")

        # sql: reads work; 20+ writes and escapes are denied; the store's bytes do not change.
        text, sc = await c.call("sql", {"sql": "SELECT count(*) AS n FROM sessions"})
        assert sc["columns"] == ["n"] and sc["rows"] == [[4]], sc
        text, sc = await c.call("sql", {"sql": "SELECT id FROM sessions ORDER BY id", "max_rows": 2})
        assert len(sc["rows"]) == 2 and sc["truncated"] is True, sc
        before = file_hash(store)
        denied = 0
        for attack in SQL_ATTACKS:
            await c.error("sql", {"sql": attack.format(work=a.work)})
            denied += 1
        assert denied >= 20
        assert file_hash(store) == before, "the store changed"
        for name in ("evil.db", "evil2.db", "evil-copy.db", "evil.txt"):
            assert not os.path.exists(os.path.join(a.work, name)), name
        text, sc = await c.call("sql", {"sql": "SELECT count(*) FROM sessions"})
        assert sc["rows"] == [[4]]
        print("sql: reads; %d write or escape attempts denied; store bytes unchanged" % denied)

        # report
        text, sc = await c.call("report", {"kind": "usage", "by": "source"})
        assert sc["kind"] == "usage" and sc["data"]["rows"], sc
        text, sc = await c.call("report", {"kind": "standup", "since": "7d"})
        assert sc["data"] is not None and "Standup" in text or "standup" in text.lower(), text[:200]
        for kind in ("tips", "improve"):
            text, sc = await c.call("report", {"kind": kind, "since": "30d"})
            assert sc["kind"] == kind and sc["data"] is not None, sc
        await c.error("report", {"kind": "weather"}, "invalid")
        await c.error("report", {"kind": "standup", "by": "day"}, "usage")
        await c.error("report", {"kind": "usage", "by": "planet"})
        await c.error("report", {"kind": "usage", "tz": "Mars/Olympus"})
        print("report: usage, standup, tips, improve; errors")

        # Unknown tool: an error result, and the connection lives on.
        await c.error("no_such_tool", {}, "unknown tool")
        text, sc = await c.call("list_sessions", {"limit": 1})

        # resources
        res = (await client.list_resources()).resources
        uris = [r.uri for r in res]
        assert "trail://schema" in uris and len([u for u in uris if u.startswith("trail://session/")]) == 4, uris
        schema = (await client.read_resource("trail://schema")).contents[0].text
        assert "sessions" in schema and "turn_index" in schema
        old_uri = next(u for u in uris if u.endswith(OLD))
        md = (await client.read_resource(old_uri)).contents[0].text
        assert "flaky parser" in md and "[REDACTED:" in md, md[:500]
        c.keep(md)
        by_prefix = (await client.read_resource("trail://session/aaaa1111")).contents[0].text
        assert "flaky parser" in by_prefix
        for bad in ("trail://nothing", "trail://session/nosuch", "trail://session/aaaa"):
            try:
                await client.read_resource(bad)
                raise AssertionError("reading %s should fail" % bad)
            except MCPError:
                pass
        print("resources: schema and sessions as Markdown (redacted); unknown ones refused")

        # prompts
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {"standup", "tips", "improve"}, prompts
        for name in sorted(prompts):
            p = await client.get_prompt(name, {"since": "30d"})
            body = p.messages[0].content.text
            assert "```json" in body and len(body) > 200, body[:300]
            c.keep(body)
        standup = (await client.get_prompt("standup", {"since": "7d"})).messages[0].content.text
        assert "standup" in standup.lower() and "flaky parser" in standup, standup[:800]
        c.keep(standup)
        for name, args in (("nope", {}), ("tips", {"planet": "x"}), ("improve", {"since": "soon"})):
            try:
                await client.get_prompt(name, args)
                raise AssertionError("prompt %s %s should fail" % (name, args))
            except MCPError:
                pass
        print("prompts: standup, tips, improve carry the data; unknown ones refused")

        # index: the agents' files are read; nothing new.
        text, sc = await c.call("index", {})
        assert sc["total_sessions"] == 4 and sc["sessions_new"] == 0, sc
        await c.error("index", {"source": "emacs"}, "unknown source")
        print("index: summary; bad source refused")

        c.no_secrets()
        print("secrets: none of %d planted secrets in %d answers" % (len(SECRETS), len(c.seen)))


async def legacy_and_no_redact(a, store, home):
    # Clients that still use the initialize handshake (most agents today).
    server = StdioServerParameters(
        command=a.trail, args=["--store", store, "--home", home, "mcp", "--no-refresh", "--no-redact"])
    async with Client(server, mode="legacy") as client:
        assert client.protocol_version < "2026-07-28", client.protocol_version
        assert client.server_info.name == "trail"
        tools = (await client.list_tools()).tools
        assert len(tools) == 9
        r = await client.call_tool("get_session", {"id": "aaaa1111"})
        text = r.content[0].text
        assert not r.is_error and GITHUB in text, "--no-redact should send the text as it is"
        r = await client.call_tool("search", {"query": "flaky"})
        assert not r.is_error and r.structured_content["hits"]
    print("legacy initialize handshake; --no-redact sends transcripts as they are")


def tree_hashes(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


async def continue_session(a, store, work):
    # Another home, so that what is written here is not indexed by the other checks.
    target_home = os.path.join(work, "continue-home")
    codex_sessions = os.path.join(target_home, ".codex", "sessions")
    os.makedirs(codex_sessions)
    planted = os.path.join(codex_sessions, "keep.txt")
    with open(planted, "w") as f:
        f.write("an existing file the continuation must not touch")
    before = tree_hashes(target_home)
    server = StdioServerParameters(
        command=a.trail, args=["--store", store, "--home", target_home, "mcp", "--no-refresh"])
    async with Client(server) as client:
        c = Checker(client)
        text, sc = await c.call("continue_session", {"id": OLD[:8], "agent": "codex"})
        assert sc["created"] is True and sc["original_id"].endswith(OLD), sc
        assert sc["agent"] == "codex" and "codex resume " + sc["session_id"] in sc["command"], sc
        assert sc["path"].startswith(codex_sessions) and os.path.isfile(sc["path"]), sc
        assert sc["carried"]["prompts"] >= 1 and sc["carried"]["redactions"] >= 1, sc
        assert "To resume it" in text, text
        with open(sc["path"]) as f:
            written = f.read()
        for s in SECRETS:
            assert s not in written, "secret %s... reached the written session" % s[:8]
        after = tree_hashes(target_home)
        assert {p: h for p, h in after.items() if p != sc["path"]} == before, "other files changed"
        # Twice: the same file, nothing new.
        text2, sc2 = await c.call("continue_session", {"id": OLD, "agent": "codex"})
        assert sc2["created"] is False and sc2["path"] == sc["path"], sc2
        assert tree_hashes(target_home) == after
        # fresh: a second copy under another id.
        _, sc3 = await c.call("continue_session", {"id": OLD, "agent": "claude", "fresh": True})
        assert sc3["agent"] == "claude-code" and "claude --resume " + sc3["session_id"] in sc3["command"], sc3
        await c.error("continue_session", {"id": OLD, "agent": "copilot-cli"}, "cannot continue")
        await c.error("continue_session", {"id": "zzzz9999", "agent": "codex"}, "no session")
        await c.error("continue_session", {"id": OLD, "agent": "codex", "cwd": "rel/dir"}, "absolute")
        await c.error("continue_session", {"agent": "codex"}, "invalid arguments")
        blob = "\n".join(c.seen)
        assert not any(s in blob for s in SECRETS), "a secret reached an answer"
    print("continue_session: writes a new codex rollout once, redacted; refuses bad agents and ids")


async def freshness(a, store, home):
    # A session written after the last index: an answer indexes it first.
    now = datetime.datetime.now(datetime.timezone.utc)
    s = Session(FRESH, now - datetime.timedelta(hours=2))
    s.user("Teach the quokkafresh parser to skip comments.")
    s.text("Done.")
    s.write(home)
    server = StdioServerParameters(
        command=a.trail, args=["--store", store, "--home", home, "mcp", "--refresh-after", "0"])
    async with Client(server) as client:
        r = await client.call_tool("search", {"query": "quokkafresh"})
        sc = r.structured_content
        assert not r.is_error and len(sc["hits"]) == 1, r.content[0].text
        assert "Indexed just now: 1 new" in sc["store"]["note"], sc["store"]
    print("freshness: a stale store is indexed before the answer, which says so")


async def no_store(a, work, home):
    missing = os.path.join(work, "missing", "trail.db")
    server = StdioServerParameters(
        command=a.trail, args=["--store", missing, "--home", home, "mcp"])
    async with Client(server) as client:
        c = Checker(client)
        await c.error("search", {"query": "x"}, "no store", "trail index")
        await c.error("list_sessions", {}, "no store")
        assert not os.path.exists(missing), "the server created a store unasked"
        text, sc = await c.call("index", {})
        assert sc["total_sessions"] == 5, sc
        text, sc = await c.call("search", {"query": "flaky", "include_active": True})
        assert sc["hits"], text
    print("no store: tools say to index; the index tool creates it")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trail", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    home = os.path.join(a.work, "home")
    store = os.path.join(a.work, "trail.db")
    big = write_fixtures(home)
    subprocess.run([a.trail, "--store", store, "--home", home, "index"], check=True,
                   stdout=subprocess.DEVNULL)
    asyncio.run(main_checks(a, store, home, big))
    asyncio.run(legacy_and_no_redact(a, store, home))
    asyncio.run(continue_session(a, store, a.work))
    asyncio.run(freshness(a, store, home))
    asyncio.run(no_store(a, a.work, home))
    print("all MCP client checks passed")


if __name__ == "__main__":
    sys.exit(main())
