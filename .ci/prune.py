"""Keeps the reused target directory bounded: of the test binaries in deps/ (most near a
gigabyte), only the builds of the last run stay (those made within six hours of the newest of
the same name: one name can have two builds in use, as a binary and as its own unit tests).

Each change of a crate's dependencies gives its test binaries a new hash, and the old ones were
left behind (they grew to tens of GB and filled the disk). Libraries are left alone: one crate
has builds for several feature sets, all in use. Usage: prune.py TARGET_DIR.
"""

import collections
import os
import re
import sys

BIG = 50_000_000


def main(target):
    deps = os.path.join(target, "debug", "deps")
    if not os.path.isdir(deps):
        return
    builds = collections.defaultdict(list)
    for name in os.listdir(deps):
        m = re.match(r"^(.*)-([0-9a-f]{16})$", name)
        path = os.path.join(deps, name)
        if m and os.path.isfile(path) and os.access(path, os.X_OK) and os.path.getsize(path) > BIG:
            builds[m.group(1)].append(path)
    freed = 0
    for paths in builds.values():
        newest = max(os.path.getmtime(p) for p in paths)
        for old in [p for p in paths if os.path.getmtime(p) < newest - 15 * 60]:
            freed += os.path.getsize(old)
            os.remove(old)
    print(f"prune: {freed / 1e9:.1f} GB of older builds removed from {deps}")


if __name__ == "__main__":
    main(sys.argv[1])
