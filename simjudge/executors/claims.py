"""Claims: several processes resuming one run share its jobs instead of each running all.

A :class:`ClaimBook` is a small SQLite file in the run directory (``claims.sqlite``). Before a
job runs, its writer claims it in one write transaction, so of two processes that reach the
same job only one gets it; the other goes on with the next job and, at the end, waits for
the result file of the job held elsewhere. A claim lapses when its lease expires or when its
owner's process is gone (same host, checked with ``kill(pid, 0)``): the next writer takes
the job over, so a writer killed mid-run loses nothing. The result itself is still written
atomically, once, by the :class:`~simjudge.executors.base.JobStore`.

Example:
    >>> import tempfile
    >>> book = ClaimBook(tempfile.mkdtemp())
    >>> book.claim("results/a"), book.claim("results/a")
    (True, True)
    >>> other = ClaimBook(book.path.parent, owner="elsewhere:1:x")
    >>> other.claim("results/a")
    False
    >>> book.release("results/a"); other.claim("results/a")
    True
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from pathlib import Path

__all__ = ["CLAIMS_FILE", "DEFAULT_LEASE_S", "ClaimBook", "this_owner"]

CLAIMS_FILE = "claims.sqlite"
DEFAULT_LEASE_S = 3600.0
"""How long a claim holds without its owner's result, when the owner cannot be checked
(another host); on this host a claim of a process that is gone lapses at once."""
_SCHEMA = "CREATE TABLE IF NOT EXISTS claims (name TEXT PRIMARY KEY, owner TEXT, expires REAL)"


def this_owner() -> str:
    """``host:pid:nonce`` of this process (the nonce tells a reused pid apart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _alive(owner: str) -> bool:
    """Whether ``owner`` may still be working (False only when provably gone)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ClaimBook:
    """The claims of one run directory.

    Args:
        root: The run directory (``claims.sqlite`` is created in it).
        owner: This writer's name (default :func:`this_owner`).
        lease_s: How long a claim holds (see :data:`DEFAULT_LEASE_S`).
    """

    def __init__(self, root: str | Path, owner: str | None = None,
                 lease_s: float = DEFAULT_LEASE_S) -> None:
        self.path = Path(root) / CLAIMS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.owner = owner or this_owner()
        self.lease_s = lease_s
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:  # opened lazily: a book can be pickled before it is used
            conn = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute(_SCHEMA)
            self._conn = conn
        return self._conn

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_conn": None}

    def claim(self, name: str) -> bool:
        """Claim job ``name``; True if this writer holds it now."""
        db = self._db()
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT owner, expires FROM claims WHERE name = ?",
                             (name,)).fetchone()
            if row is not None and row[0] != self.owner and float(row[1]) > now \
                    and _alive(str(row[0])):
                db.execute("COMMIT")
                return False
            db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)",
                       (name, self.owner, now + self.lease_s))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return True

    def release(self, name: str) -> None:
        """Drop this writer's claim on ``name`` (its result is written, or it gives it back)."""
        self._db().execute("DELETE FROM claims WHERE name = ? AND owner = ?", (name, self.owner))

    def close(self) -> None:
        """Close the database connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
