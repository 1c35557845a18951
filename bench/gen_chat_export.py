#!/usr/bin/env python3
"""Writes a synthetic chat-service data export for memory and speed checks of `trail import`:
a ChatGPT-shaped or a Claude.ai-shaped `conversations.json` of about `--mib` MiB, made from a
seed (the same seed gives the same bytes). The shapes are those of trail's own fixtures
(`crates/trail-sources/tests/fixtures/{chatgpt,claude-ai}-export/conversations.json`):
ChatGPT's `mapping` tree of messages with `current_node`, Claude.ai's `chat_messages` with text,
thinking and tool_use/tool_result blocks.

    python3 bench/gen_chat_export.py --kind chatgpt --mib 150 --seed 7 --out /tmp/gpt/conversations.json
    python3 bench/gen_chat_export.py --kind claude-ai --mib 150 --seed 7 --out /tmp/cai/conversations.json

Prints the conversations, messages and bytes written.
"""

import argparse
import json
import os
import random
import uuid

WORDS = (
    "the a borrow checker lifetime vector index query table column join parse stream "
    "memory buffer thread channel lock future async await trait impl struct enum match "
    "error result option iterator closure module crate test bench release profile cache "
    "network socket request response header status retry backoff timeout config path file"
).split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def paragraph(rng, lo, hi):
    return " ".join(sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(lo, hi)))


def uid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def chatgpt_conversation(rng, i, t0):
    """One ChatGPT conversation: a root, then user/assistant pairs in a chain."""
    cid = uid(rng)
    mapping = {}
    root = f"{cid}-root"
    mapping[root] = {"id": root, "message": None, "parent": None, "children": []}
    parent = root
    t = t0
    turns = rng.randint(2, 8)
    for k in range(turns * 2):
        mid = f"{cid}-{k}"
        role = "user" if k % 2 == 0 else "assistant"
        text = paragraph(rng, 1, 2) if role == "user" else paragraph(rng, 3, 10)
        t += rng.uniform(2, 60)
        mapping[mid] = {
            "id": mid,
            "message": {
                "id": mid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": t,
                "update_time": t,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "end_turn": role == "assistant",
                "weight": 1.0,
                "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
                "recipient": "all",
                "channel": None,
            },
            "parent": parent,
            "children": [],
        }
        mapping[parent]["children"].append(mid)
        parent = mid
    return {
        "title": sentence(rng, 4)[:-1],
        "create_time": t0,
        "update_time": t,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "conversation_id": cid,
        "id": cid,
        "default_model_slug": "gpt-4o",
    }, turns * 2


def iso(t):
    import datetime

    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )


def claude_conversation(rng, i, t0):
    """One Claude.ai conversation: human and assistant messages, some with a tool call."""
    msgs = []
    t = t0
    turns = rng.randint(2, 8)
    for k in range(turns):
        t += rng.uniform(2, 60)
        q = paragraph(rng, 1, 2)
        msgs.append({
            "uuid": uid(rng), "text": q,
            "content": [{"start_timestamp": iso(t), "stop_timestamp": iso(t), "type": "text",
                         "text": q, "citations": []}],
            "sender": "human", "created_at": iso(t), "updated_at": iso(t),
            "attachments": [], "files": [],
        })
        t += rng.uniform(2, 60)
        a = paragraph(rng, 3, 10)
        blocks = [{"start_timestamp": iso(t), "stop_timestamp": iso(t), "type": "thinking",
                   "thinking": paragraph(rng, 1, 3), "summaries": [], "cut_off": False}]
        if rng.random() < 0.3:
            call = uid(rng)
            blocks.append({"start_timestamp": iso(t), "stop_timestamp": iso(t), "type": "tool_use",
                           "id": call, "name": "web_search", "input": {"query": sentence(rng, 4)}})
            blocks.append({"start_timestamp": iso(t), "stop_timestamp": iso(t), "type": "tool_result",
                           "tool_use_id": call, "name": "web_search", "is_error": False,
                           "content": [{"type": "text", "text": paragraph(rng, 1, 3)}]})
        blocks.append({"start_timestamp": iso(t), "stop_timestamp": iso(t), "type": "text",
                       "text": a, "citations": []})
        msgs.append({
            "uuid": uid(rng), "text": a, "content": blocks, "sender": "assistant",
            "created_at": iso(t), "updated_at": iso(t), "attachments": [], "files": [],
        })
    return {
        "uuid": uid(rng), "name": sentence(rng, 4)[:-1], "summary": "",
        "created_at": iso(t0), "updated_at": iso(t),
        "account": {"uuid": "9d0c7b6a-5f4e-4d3c-8b2a-190817263544"},
        "chat_messages": msgs,
    }, len(msgs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=["chatgpt", "claude-ai"], required=True)
    ap.add_argument("--mib", type=float, default=150)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    make = chatgpt_conversation if args.kind == "chatgpt" else claude_conversation
    target = int(args.mib * (1 << 20))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    conversations = messages = 0
    t0 = 1_735_689_600.0  # 2025-01-01
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("[")
        written = 1
        while written < target:
            conv, n = make(rng, conversations, t0 + conversations * 3600)
            text = json.dumps(conv, indent=2)
            f.write(("," if conversations else "") + "\n" + text)
            written += len(text.encode()) + 2
            conversations += 1
            messages += n
        f.write("\n]\n")
    size = os.path.getsize(args.out)
    print(f"{args.kind}: {conversations} conversations, {messages} messages, {size} bytes -> {args.out}")


if __name__ == "__main__":
    main()
