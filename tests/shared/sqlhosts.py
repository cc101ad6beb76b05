#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sqlhosts.py - one SQLite database written from two hosts at once
(tests/shared/apps.sh), each writer through its own host's mount.

  sqlhosts.py create DB MODE
      a new database in journal mode MODE (DELETE, WAL) with table t
  sqlhosts.py write NAME DB HOST N MODE START_MS OUT
      from wall-clock time START_MS on, N inserts of (HOST, i), each its own
      transaction (BEGIN IMMEDIATE), retried while SQLite says the database is
      busy or locked; the committed i go to OUT, one a line. Prints
      "yes NAME.writer-HOST 1|0 DETAIL": 0 for any other error
  sqlhosts.py check NAME DB HOST=OUT...
      PRAGMA integrity_check on DB ("yes NAME.integrity 1|0 DETAIL") and every
      row HOST's writer committed, as its OUT lists them, present
      ("count NAME.rows PRESENT COMMITTED");
      a DB given as file:PATH is opened read-only and immutable
Output lines are the ones tests/shared/lib.sh's sh_compare reads.
"""
import os
import sqlite3
import sys
import time

RETRY_S = 60  # a writer gives up on one insert after this long busy


def create(db, mode):
    con = sqlite3.connect(db, isolation_level=None)
    got = con.execute("PRAGMA journal_mode=" + mode).fetchone()[0]
    if got.upper() != mode.upper():
        sys.exit("journal_mode %s refused (%s)" % (mode, got))
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, host TEXT, n INTEGER, payload TEXT)")
    con.close()


def insert(con, host, i):
    """one transaction; None once committed, else the error"""
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t(host, n, payload) VALUES(?, ?, ?)",
                    (host, i, os.urandom(64).hex()))
        con.execute("COMMIT")
        return None
    except sqlite3.Error as e:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        return e


def busy(err):
    return isinstance(err, sqlite3.OperationalError) and (
        "locked" in str(err) or "busy" in str(err))


def write(name, db, host, n, mode, start_ms, out):
    con = sqlite3.connect(db, timeout=0.2, isolation_level=None)
    problem, retries = None, 0
    with open(out, "w") as f:
        try:
            con.execute("PRAGMA journal_mode=" + mode)
        except sqlite3.Error as e:
            problem = "journal_mode: %s" % e
        time.sleep(max(0, start_ms / 1000 - time.time()))
        for i in range(n if problem is None else 0):
            deadline = time.monotonic() + RETRY_S
            err = insert(con, host, i)
            while busy(err) and time.monotonic() < deadline:
                retries += 1
                time.sleep(0.005)
                err = insert(con, host, i)
            if err is not None:
                problem = "insert %d: %s" % (i, err)
                break
            print(i, file=f, flush=True)
    con.close()
    print("yes %s.writer-%s %d %s, %d busy retries" %
          (name, host, problem is None, problem or "%d committed" % n, retries))


def check(name, db, outs):
    if db.startswith("file:"):
        con = sqlite3.connect(db + "?immutable=1", uri=True)
    else:
        con = sqlite3.connect(db)
    try:
        res = [r[0] for r in con.execute("PRAGMA integrity_check")]
        rows = set(con.execute("SELECT host, n FROM t"))
    except sqlite3.Error as e:
        res, rows = [str(e)], set()
    print("yes %s.integrity %d %s" % (name, res == ["ok"], " ".join(res)[:200]))
    want = set()
    for arg in outs:
        host, out = arg.split("=", 1)
        with open(out) as f:
            want |= {(host, int(line)) for line in f}
    missing = sorted(want - rows)
    print("count %s.rows %d %d%s" % (name, len(want) - len(missing), len(want),
                                     " missing: %s" % missing[:5] if missing else ""))


def main(argv):
    if len(argv) == 4 and argv[1] == "create":
        create(argv[2], argv[3])
    elif len(argv) == 9 and argv[1] == "write":
        write(argv[2], argv[3], argv[4], int(argv[5]), argv[6], int(argv[7]), argv[8])
    elif len(argv) >= 4 and argv[1] == "check":
        check(argv[2], argv[3], argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
