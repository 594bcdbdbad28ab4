#!/usr/bin/env python3
"""Lists the functions of the crates' sources longer than a screenful (100 lines, from the line
with `fn` to its closing brace) and fails when any is not among the ones allowed below, each
with why it stays long. Test code (`tests/`, `tests*.rs`, `#[cfg(test)]` items) is left out: a
test reads as a story. Usage: long_functions.py CRATE_DIR...
"""
import os
import re
import sys

LIMIT = 100
# The functions allowed to be longer, as `file:function`, each with its reason.
ALLOWED = {
    # Upstream learning of a partition: the settings, the blocking training loop with its
    # progress, and the lease's watch share their state; split, they pass a dozen values.
    "learners/src/crossfit/upstream.rs:write_upstream",
    # One CrossFit seed's grid search, likewise: data, the blocking loop, progress and lease.
    "learners/src/crossfit/worker.rs:learn_seed",
}

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)")


def code_lines(text):
    """The file's lines with comments, strings and chars blanked (braces in them do not count)."""
    out, i, n = [], 0, len(text)
    buf = []
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            buf.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'r(#*)"', text[i:i + 10]) if c == "r" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            buf.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            buf.append("\n" * text.count("\n", i, j + 1))
            i = j + 1
            continue
        if c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            j = text.find("'", i + 2 if text[i + 1] != "\\" else i + 3)
            i = j + 1
            continue
        buf.append(c)
        i += 1
    return "".join(buf).split("\n")


def test_ranges(lines):
    """Line ranges of `#[cfg(test)]` items (brace-matched)."""
    ranges = []
    for k, line in enumerate(lines):
        if "#[cfg(test)]" in line:
            end = block_end(lines, k)
            if end is not None:
                ranges.append((k, end))
    return ranges


def block_end(lines, start):
    depth, opened = 0, False
    for k in range(start, len(lines)):
        for ch in lines[k]:
            if ch == "{":
                depth += 1
                opened = True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return k
        if not opened and lines[k].rstrip().endswith(";"):
            return None
    return None


def long_functions(path):
    with open(path, encoding="utf-8") as f:
        lines = code_lines(f.read())
    tests = test_ranges(lines)
    for k, line in enumerate(lines):
        m = FN.match(line)
        if not m or any(a <= k <= b for a, b in tests):
            continue
        end = block_end(lines, k)
        if end is not None and end - k + 1 > LIMIT:
            yield m.group(1), k + 1, end - k + 1


def main(dirs):
    found = []
    for d in dirs:
        for root, _, files in os.walk(os.path.join(d, "src")):
            for name in sorted(files):
                if not name.endswith(".rs") or name.startswith("tests"):
                    continue
                path = os.path.join(root, name)
                for fn, line, n in long_functions(path):
                    found.append((f"{path}:{fn}", line, n))
    new = [f for f in found if f[0] not in ALLOWED]
    for key, line, n in sorted(found, key=lambda f: -f[2]):
        mark = "allowed" if key in ALLOWED else "NEW"
        print(f"long functions: {key} (line {line}) is {n} lines [{mark}]")
    stale = [k for k in ALLOWED if k not in {f[0] for f in found}]
    for k in stale:
        print(f"long functions: {k} is no longer over {LIMIT} lines: remove it from ALLOWED")
    if new:
        print(f"long functions: {len(new)} over {LIMIT} lines beyond the allowed ones: split them, or allow one with its reason")
        return 1
    print(f"long functions: none over {LIMIT} lines beyond the {len(ALLOWED)} allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
