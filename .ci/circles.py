#!/usr/bin/env python3
"""Fails when modules of a crate import each other in a circle.

Each .rs file under a crate's src/ is a module; a path in it that starts with `crate::`,
`super::` or `self::` (in a `use`, braces expanded, or inline in code) is an edge to the longest
module that path names. Test code (`#[cfg(test)]` blocks, `tests*.rs` files) is left out: a
test may reach across. Prints every strongly connected set of two or more modules.
Usage: circles.py CRATE_DIR...
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE = re.compile(r"\buse\s+((?:crate|super|self)::[^;]*);", re.S)


def modules(src):
    """Module path (tuple) -> file, for every .rs file of a crate's src/."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main", "mod"):
                rel = rel[:-1]
            out[tuple(rel)] = os.path.join(root, f)
    return out


def expand(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = re.sub(r"\s+", "", tree)
    depth, start = 0, None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                prefix, inner, rest = tree[:start], tree[start + 1 : i], tree[i + 1 :]
                parts, d, cur = [], 0, ""
                for c in inner:
                    if c == "," and d == 0:
                        parts.append(cur)
                        cur = ""
                        continue
                    d += c == "{"
                    d -= c == "}"
                    cur += c
                parts.append(cur)
                return [x for p in parts if p for x in expand(prefix + p + rest)]
    return [tree]


def strip_tests(text):
    """The file without its `#[cfg(test)]` items (a module or a function, brace-matched)."""
    out, i = [], 0
    while True:
        j = text.find("#[cfg(test)]", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = j + len("#[cfg(test)]")
        semi, brace = text.find(";", k), text.find("{", k)
        if brace < 0 or (0 <= semi < brace):
            i = semi + 1
            continue
        depth, p = 0, brace
        while p < len(text):
            depth += text[p] == "{"
            depth -= text[p] == "}"
            p += 1
            if depth == 0:
                break
        i = p


def resolve(here, path, mods):
    segs = path.split("::")
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    else:
        base, rest = here, segs
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    best = None
    for n in range(len(rest), -1, -1):
        cand = base + tuple(rest[:n])
        if cand in mods:
            best = cand
            break
    return best


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main(dirs):
    bad = 0
    for crate in dirs:
        src = os.path.join(crate, "src")
        mods = modules(src)
        graph = {}
        for m, f in mods.items():
            if os.path.basename(f).startswith("tests"):
                continue
            text = strip_tests(open(f, encoding="utf-8").read())
            text = re.sub(r"//[^\n]*", "", text)
            paths = [p for u in USE.findall(text) for p in expand(u)]
            paths += [m0 + m1 for m0, m1 in PATH.findall(USE.sub("", text))]
            for p in paths:
                t = resolve(m, p, mods)
                if t is not None and t != m and t[: len(m)] != m and m[: len(t)] != t:
                    graph.setdefault(m, set()).add(t)
        for comp in sccs(graph):
            if len(comp) > 1:
                bad += 1
                names = sorted("::".join(c) or "crate" for c in comp)
                print(f"{crate}: modules import each other in a circle: {', '.join(names)}")
    if bad:
        sys.exit(1)
    print(f"no import circles in {', '.join(dirs)}")


if __name__ == "__main__":
    main(sys.argv[1:])
