#!/usr/bin/env python3
"""Structure counts for the trail workspace (issue 41), stdlib only.

    python3 tools/fnlen.py [--root DIR] [--over N] [--list]

Prints, for the tree at DIR (default: this checkout):
  - non-test Rust functions over 120 and 150 lines (and over --over N, listed
    with --list), counted from the line holding `fn` to the line of its closing
    brace. Left out: files under tests/, benches/, examples/ and fuzz/, and
    everything inside a `#[cfg(test)]` item (usually `mod tests { .. }`);
  - crate dependency edges between workspace crates, from `cargo metadata`
    (normal and build dependencies; dev-dependencies counted apart);
  - file-level import cycles inside each crate: an edge a -> b for each
    `crate::b..`, `super::..` or `self::..` path (in `use` or inline) in the
    non-test code of module a that names module b, and for `use b::..` where
    b is a child module of a. Cycles are the strongly connected components
    with more than one module.

The Rust reading is a small lexer (comments, strings, raw strings, chars and
lifetimes are blanked before braces are matched), not a parser: it is exact
for rustfmt-formatted code, which the workspace is.
"""

import argparse
import json
import os
import re
import subprocess
import sys

SKIP_DIRS = {"tests", "benches", "examples", "fuzz", "target", ".git"}


def blank(src):
    """Return src with comments, string and char literal contents replaced by
    spaces; newlines are kept so line numbers stay true."""
    out = []
    i, n = 0, len(src)

    def keep_newlines(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_newlines(src[i:j]))
            i = j
        elif c in "rb" and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'(br|r)(#*)"', src[i:])
            if m:
                close = '"' + m.group(2)
                j = src.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
                out.append(keep_newlines(src[i:j]))
                i = j
            elif src.startswith('b"', i) or src.startswith("b'", i):
                out.append(" ")
                i += 1
            else:
                out.append(c)
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(keep_newlines(src[i:j]))
            i = j
        elif c == "'":
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 2)
                j = n if j < 0 else j + 1
                out.append(" " * (j - i))
                i = j
            elif i + 2 < n and src[i + 2] == "'":
                out.append("   ")
                i += 3
            else:
                out.append(c)  # a lifetime
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def match_brace(text, open_at):
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text) - 1


def strip_cfg_test(text):
    """Blank every item that follows `#[cfg(test)]` (a module, fn or impl)."""
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]", text))):
        k = m.end()
        brace = text.find("{", k)
        semi = text.find(";", k)
        if brace < 0 or (0 <= semi < brace):
            end = semi
        else:
            end = match_brace(text, brace)
        seg = text[m.start() : end + 1]
        text = text[: m.start()] + "".join("\n" if c == "\n" else " " for c in seg) + text[end + 1 :]
    return text


def rust_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = strip_cfg_test(blank(fh.read()))
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", text):
        k = m.end()
        # The body starts at the first `{` after the signature; a `;` first
        # means a declaration without a body (trait items, extern fns).
        depth = 0
        body = None
        while k < len(text):
            ch = text[k]
            if ch in "([<":
                depth += 1
            elif ch in ")]>" and depth:
                # `->` is not a closing angle bracket
                if not (ch == ">" and text[k - 1] == "-"):
                    depth -= 1
            elif ch == ";" and depth == 0:
                break
            elif ch == "{" and depth == 0:
                body = k
                break
            k += 1
        if body is None:
            continue
        end = match_brace(text, body)
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, end) + 1
        yield m.group(1), first, last - first + 1


def long_functions(root):
    rows = []
    crates = os.path.join(root, "crates")
    for path in rust_files(crates):
        for name, line, length in functions(path):
            rows.append((length, os.path.relpath(path, root), line, name))
    rows.sort(reverse=True)
    return rows


def crate_edges(root):
    out = subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    meta = json.loads(out)
    names = {p["name"] for p in meta["packages"]}
    normal, dev = set(), set()
    for p in meta["packages"]:
        for d in p["dependencies"]:
            if d["name"] in names:
                (dev if d["kind"] == "dev" else normal).add((p["name"], d["name"]))
    return sorted(normal), sorted(dev - normal)


def crate_modules(src):
    """Map module path (tuple) -> file for one crate's src/ folder."""
    mods = {}
    for path in rust_files(src):
        rel = os.path.relpath(path, src)[:-3].split(os.sep)
        if rel[-1] == "mod":
            rel = rel[:-1]
        if rel in (["lib"], ["main"]):
            rel = []
        if rel and rel[0] == "bin":
            continue
        mods[tuple(rel)] = path
    return mods


def resolve(mods, base):
    """Longest prefix of the path `base` that is a module."""
    for k in range(len(base), -1, -1):
        if tuple(base[:k]) in mods:
            return tuple(base[:k])
    return ()


PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*(?:super|[A-Za-z_][A-Za-z0-9_]*))+)")
USE_RE = re.compile(r"\buse\s+([^;]+);")


def use_paths(tree):
    """Expand a use tree `a::{b, c::{d}}` into its paths."""
    tree = re.sub(r"\s+", "", tree)
    tree = re.sub(r"\bas[A-Za-z_][A-Za-z0-9_]*", "", tree)
    if "{" not in tree:
        return [tree.split("::")]
    head, rest = tree.split("{", 1)
    inner = rest[: rest.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    prefix = [x for x in head.split("::") if x]
    out = []
    for p in parts:
        if p:
            out += [prefix + q for q in use_paths(p)]
    return out


def absolute(mods, mod, segs):
    """The path `segs`, written in module `mod`, from the crate root; None
    for paths into other crates."""
    if not segs:
        return None
    if segs[0] == "crate":
        return list(segs[1:])
    if segs[0] in ("super", "self"):
        cur = list(mod)
        k = 0
        while k < len(segs) and segs[k] in ("super", "self"):
            if segs[k] == "super":
                cur = cur[:-1]
            k += 1
        return cur + list(segs[k:])
    if tuple(list(mod) + [segs[0]]) in mods:
        return list(mod) + list(segs)
    return None


REEXPORT_RE = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);")


def module_texts(mods):
    texts = {}
    for mod, path in mods.items():
        with open(path, encoding="utf-8", errors="replace") as fh:
            texts[mod] = strip_cfg_test(blank(fh.read()))
    return texts


def reexports(mods, texts):
    """Per module, the names it re-exports (`pub use a::B;`) or aliases (`use
    shared::jsonl;`, a module brought into scope, which children then reach as
    `crate::jsonl`) -> absolute path. Neither is a dependency of the module's
    own code: an import of `crate::B` is followed to where B is defined."""
    out = {}
    for mod, text in texts.items():
        names = {}
        for m in REEXPORT_RE.finditer(text):
            for segs in use_paths(m.group(1)):
                target = absolute(mods, mod, segs)
                if target and segs[-1] != "*":
                    names[segs[-1]] = target
        for segs in module_aliases(mods, mod, text):
            names[segs[-1]] = absolute(mods, mod, segs)
        out[mod] = names
    return out


def module_aliases(mods, mod, text):
    """The `use` paths in `text` that name a module of the crate (not an item)."""
    out = []
    for m in USE_RE.finditer(text):
        for segs in use_paths(m.group(1)):
            target = absolute(mods, mod, segs)
            if target and tuple(target) in mods:
                out.append(segs)
    return out


def resolve_item(mods, reexp, target):
    for _ in range(8):
        m = resolve(mods, target)
        rest = target[len(m) :]
        if rest and rest[0] in reexp.get(m, {}):
            target = reexp[m][rest[0]] + rest[1:]
            continue
        return m
    return resolve(mods, target)


def module_edges(mods):
    texts = module_texts(mods)
    reexp = reexports(mods, texts)
    edges = {m: set() for m in mods}
    for mod, text in texts.items():
        own = REEXPORT_RE.sub(" ", text)
        paths = []
        aliases = {segs[-1]: segs for segs in module_aliases(mods, mod, own)}
        for m in USE_RE.finditer(own):
            paths += [p for p in use_paths(m.group(1)) if not (p and p[-1] in aliases)]
        # A module alias is a dependency where the module's code uses it (`jsonl::read`).
        body = USE_RE.sub(" ", own)
        for name, segs in aliases.items():
            for m in re.finditer(r"(?<![\w:])" + re.escape(name) + r"\s*::\s*([A-Za-z_]\w*)", body):
                paths.append(list(segs) + [m.group(1)])
        for m in PATH_RE.finditer(own):
            segs = [m.group(1)] + [s for s in re.sub(r"\s+", "", m.group(2)).split("::") if s]
            paths.append(segs)
        for segs in paths:
            target = absolute(mods, mod, segs)
            if target is None:
                continue
            t = resolve_item(mods, reexp, target)
            if t != mod:
                edges[mod].add(t)
    return edges


def sccs(edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def import_cycles(root):
    result = []
    crates = os.path.join(root, "crates")
    for c in sorted(os.listdir(crates)):
        src = os.path.join(crates, c, "src")
        if not os.path.isdir(src):
            continue
        mods = crate_modules(src)
        edges = module_edges(mods)
        for comp in sccs(edges):
            names = ["::".join(m) or "(root)" for m in comp]
            inner = [
                ("::".join(a) or "(root)", "::".join(b) or "(root)")
                for a in comp
                for b in sorted(edges[a])
                if b in comp
            ]
            result.append((c, names, inner))
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--over", type=int, default=120, help="list functions over N lines")
    ap.add_argument("--list", action="store_true", help="list the long functions and the edges")
    ap.add_argument("--no-edges", action="store_true", help="skip cargo metadata")
    args = ap.parse_args()

    rows = long_functions(args.root)
    print(f"functions over 120 lines: {sum(1 for r in rows if r[0] > 120)}")
    print(f"functions over 150 lines: {sum(1 for r in rows if r[0] > 150)}")
    print(f"functions over 200 lines: {sum(1 for r in rows if r[0] > 200)}")
    if args.list:
        for length, path, line, name in rows:
            if length > args.over:
                print(f"  {length:4d}  {path}:{line}  {name}")
    if not args.no_edges:
        normal, dev = crate_edges(args.root)
        print(f"crate dependency edges: {len(normal)} (plus {len(dev)} dev-only)")
        if args.list:
            for a, b in normal:
                print(f"  {a} -> {b}")
    cycles = import_cycles(args.root)
    print(f"file-level import cycles: {len(cycles)}")
    for crate, names, inner in cycles:
        print(f"  {crate}: {' <-> '.join(names)}")
        if args.list:
            for a, b in inner:
                print(f"      {a} -> {b}")


if __name__ == "__main__":
    main()
