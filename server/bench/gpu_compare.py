"""Compares two stored evaluations of one task (gpu-run.sh: the same model on the GPU and on the
CPU): the items whose answers differ, and the largest difference of a span's score where the
spans agree. Reads the SQLite database with Python's own sqlite3 (nothing to install).
Usage: gpu_compare.py [--strict] DB_FILE TASK SYSTEM_A SYSTEM_B   (--strict: fails when an
answer differs)"""

import json
import sqlite3
import sys

QUERY = """
SELECT p.example_id, p.answer_json, p.spans_json, p.s1
FROM machine_predictions p
JOIN machine_runs r ON r.id = p.run_id
JOIN machine_systems s ON s.id = r.system_id
JOIN tasks t ON t.id = r.task_id
WHERE t.name = ? AND s.name = ? AND r.status = 'done'
"""


def answers(db, task, system):
    rows = db.execute(QUERY, (task, system)).fetchall()
    if not rows:
        sys.exit(f"no finished evaluation of {system!r} on {task}")
    return {r[0]: (json.loads(r[1]), json.loads(r[2]), r[3]) for r in rows}


def main():
    args = sys.argv[1:]
    strict = args[:1] == ["--strict"]
    args = args[1:] if strict else args
    if len(args) != 4:
        sys.exit(__doc__)
    path, task, a_name, b_name = args
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    a, b = answers(db, task, a_name), answers(db, task, b_name)
    if a.keys() != b.keys():
        sys.exit(f"the two evaluations answer different items ({len(a)} and {len(b)})")
    differ = [i for i in a if a[i][0] != b[i][0]]
    gap = 0.0
    for i in a:
        sa, sb = a[i][1], b[i][1]
        if [s["text"] for s in sa] == [s["text"] for s in sb]:
            gap = max([gap] + [abs(x["score"] - y["score"]) for x, y in zip(sa, sb)])
    s1 = lambda d: 100.0 * sum(v[2] for v in d.values()) / len(d)
    print(f"{task}: {a_name!r} against {b_name!r}: answers differ on {len(differ)} of {len(a)} items; "
          f"S1 {s1(a):.2f} and {s1(b):.2f}; largest score difference where the spans agree {gap:.2e}")
    if strict and differ:
        sys.exit(f"the answers must agree here; they differ on items {differ[:10]}")


if __name__ == "__main__":
    main()
