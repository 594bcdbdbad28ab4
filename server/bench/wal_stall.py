#!/usr/bin/env python3
"""Why `serve` checkpoints on a connection of its own (store::checkpoint), in SQLite alone:
a 300k-row table, a reader that pins the write-ahead log for SECONDS while a writer commits
three-row updates (synchronous=FULL), then 5 s more. Prints the slowest commit before and after
the reader ends (by when each commit returned), with SQLite's automatic checkpoints (`auto`) and with a checkpointer thread
doing what store::checkpoint does (`apart`: wal_autocheckpoint=0, PASSIVE every second,
RESTART with a 50 ms wait once the whole log is copied and longer than 4,096 frames).
Usage: python3 server/bench/wal_stall.py [SECONDS] (default 40); runs in a temporary folder."""
import os, random, sqlite3, sys, tempfile, threading, time


def run(mode, seconds, folder):
    db = os.path.join(folder, f"{mode}.db")
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE a (id INTEGER PRIMARY KEY, s TEXT, t INTEGER)")
    c.execute("CREATE INDEX ai ON a (t)")
    c.execute("BEGIN")
    c.executemany("INSERT INTO a (s, t) VALUES (?, ?)", (("x" * 200, i) for i in range(300_000)))
    c.execute("COMMIT")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    w = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    w.execute("PRAGMA synchronous=FULL")
    if mode == "apart":
        w.execute("PRAGMA wal_autocheckpoint=0")
    reader = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    reader.execute("BEGIN")
    rows = reader.execute("SELECT * FROM a")
    rows.fetchmany(10)
    commits, stop = [], threading.Event()

    def writer():
        while not stop.is_set():
            t0 = time.time()
            w.execute("BEGIN IMMEDIATE")
            for _ in range(3):
                w.execute("UPDATE a SET s = ?, t = ? WHERE id = ?",
                          ("y" * 200, random.randint(0, 1 << 30), random.randint(1, 300_000)))
            w.execute("COMMIT")
            commits.append((t0, time.time() - t0))
            time.sleep(0.005)

    def checkpointer():
        k = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        k.execute("PRAGMA busy_timeout=50")
        while not stop.is_set():
            busy, frames, copied = k.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if busy == 0 and frames == copied and frames > 4096:
                k.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
            stop.wait(1)

    threads = [threading.Thread(target=writer)]
    if mode == "apart":
        threads.append(threading.Thread(target=checkpointer))
    for t in threads:
        t.start()
    time.sleep(seconds)
    log_mb = os.path.getsize(db + "-wal") / 1e6
    rows.fetchall()
    reader.execute("COMMIT")
    ended = time.time()
    time.sleep(5)
    stop.set()
    for t in threads:
        t.join()
    # By when each commit returned: the one under way as the reader ended counts as after.
    before = max(d for t, d in commits if t + d < ended)
    after = max(d for t, d in commits if t + d >= ended)
    print(f"{mode:>5}: {len(commits)} commits, log {log_mb:.0f} MB when the reader ended; "
          f"slowest commit {before * 1000:.0f} ms before, {after * 1000:.0f} ms after")


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 40
    with tempfile.TemporaryDirectory() as folder:
        for mode in ("auto", "apart"):
            run(mode, seconds, folder)
