"""The arena's SQLite database: policies, planned matches, blind handles, results.

One file, ``<run>/arena.sqlite``, written through :mod:`sqlite3` in WAL mode with a busy
time-out, so several processes may read and append at once. Every write is idempotent:
planning a match that exists, registering a policy again with the same spec, or recording
a result twice changes nothing (a *different* second result for the same match is refused),
so a killed run resumes from the database with nothing lost or repeated, and two processes
playing the same match (same seed, same verdict) do not conflict.

Schema (``SCHEMA_VERSION`` 1):

* ``meta(key PRIMARY KEY, value)`` — ``schema_version`` and the run's config (JSON).
* ``policies(name PRIMARY KEY, spec, added_at)`` — who may play.
* ``matches(match_id PRIMARY KEY, idx UNIQUE, task, seed, handle_a, handle_b, status,
  created_at)`` — the double-blind view: an evaluator sees the task, the seed and two
  opaque handles; ``status`` is ``pending``, ``done`` or ``failed``.
* ``sides(match_id, side, handle UNIQUE, policy)`` with ``side`` in (A, B) — the sealed key
  from handles to policies, read only when rankings are computed.
* ``results(match_id PRIMARY KEY, evaluator, progress_a, progress_b, preference, reason,
  details, error, recorded_at)`` — ``preference`` is ``A``, ``B`` or ``tie`` (NULL with
  ``error`` for a match that could not be played).

Example:
    >>> import tempfile, pathlib
    >>> db = ArenaStore(pathlib.Path(tempfile.mkdtemp()) / "arena.sqlite")
    >>> db.register_policies({"good": "oracle", "bad": "zero"})
    >>> m = PlannedMatch("m00000", 0, "OpenDrawer-v0", 7, "h1", "h2", "good", "bad")
    >>> db.plan(m), db.plan(m)
    (True, False)
    >>> db.record(MatchResult("m00000", "oracle", 100.0, 0.0, "A", "A opened it"))
    True
    >>> [(c.a, c.b, c.outcome) for c in db.comparisons()]
    [('good', 'bad', 2)]
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simjudge.envs.errors import SimjudgeError
from simjudge.judges.metrics.rankings import OUTCOMES, Comparison

__all__ = ["DB_FILE", "SCHEMA_VERSION", "ArenaStore", "ArenaStoreError", "BlindMatch",
           "MatchResult", "PlannedMatch"]

DB_FILE = "arena.sqlite"
"""The database's file name inside an arena run directory."""
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS policies (
    name TEXT PRIMARY KEY, spec TEXT NOT NULL, added_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY, idx INTEGER NOT NULL UNIQUE, task TEXT NOT NULL,
    seed INTEGER NOT NULL, handle_a TEXT NOT NULL, handle_b TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sides (
    match_id TEXT NOT NULL REFERENCES matches(match_id), side TEXT NOT NULL
    CHECK (side IN ('A', 'B')), handle TEXT NOT NULL UNIQUE,
    policy TEXT NOT NULL REFERENCES policies(name), PRIMARY KEY (match_id, side));
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id), evaluator TEXT NOT NULL,
    progress_a REAL, progress_b REAL,
    preference TEXT CHECK (preference IS NULL OR preference IN ('A', 'B', 'tie')),
    reason TEXT NOT NULL DEFAULT '', details TEXT NOT NULL DEFAULT '{}',
    error TEXT NOT NULL DEFAULT '', recorded_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS matches_status ON matches(status);
CREATE TABLE IF NOT EXISTS claims (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id), owner TEXT NOT NULL,
    expires REAL NOT NULL);
"""


class ArenaStoreError(SimjudgeError, ValueError):
    """The arena database refuses a write; the message says why and what to do."""


def _verdict(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The parts of a stored result that make the verdict (all but ``details``)."""
    return values[:5] + values[6:]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


@dataclass(frozen=True)
class BlindMatch:
    """What an evaluator may see of a match: no policy names.

    Attributes:
        match_id: Stable id (``m00042``).
        idx: Position in the sampling order.
        task: Task id the match is played on.
        seed: Scene seed; both sides start from the same snapshot of this scene.
        handle_a: Opaque handle of the policy shown as A.
        handle_b: Opaque handle of the policy shown as B.
    """

    match_id: str
    idx: int
    task: str
    seed: int
    handle_a: str
    handle_b: str


@dataclass(frozen=True)
class PlannedMatch(BlindMatch):
    """A match with its sealed key (which policy sits behind each handle).

    Attributes:
        policy_a: Policy behind ``handle_a``.
        policy_b: Policy behind ``handle_b``.
    """

    policy_a: str = ""
    policy_b: str = ""

    def blind(self) -> BlindMatch:
        """The evaluator's view."""
        return BlindMatch(self.match_id, self.idx, self.task, self.seed, self.handle_a,
                          self.handle_b)


@dataclass(frozen=True)
class MatchResult:
    """An evaluator's verdict on a match (or why it could not be played).

    Attributes:
        match_id: The match.
        evaluator: Who judged (``oracle``, ``judge:privileged``, ...).
        progress_a: A's progress 0–100.
        progress_b: B's progress 0–100.
        preference: ``A``, ``B`` or ``tie``; None when ``error`` is set.
        reason: Why (templated from the judge signals, or a critique).
        details: Signals behind the verdict (steps, success, OPD metrics, timing).
        error: Why the match failed ("" when it was played).
    """

    match_id: str
    evaluator: str
    progress_a: float | None = None
    progress_b: float | None = None
    preference: str | None = None
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""

    def __post_init__(self) -> None:
        if self.error == "" and self.preference not in OUTCOMES:
            raise ArenaStoreError(f"match {self.match_id}: preference must be one of "
                                  f"{list(OUTCOMES)}, got {self.preference!r}")


def _set_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL, retrying while another process creates or converts the file.

    SQLite does not always call the busy handler for a journal-mode change: two processes
    that open a new database at once can get "database is locked" at once. Retry with
    backoff up to ``timeout`` seconds, then say which file is held.
    """
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise ArenaStoreError(f"arena database is held by another process for more "
                                      f"than {timeout:.0f} s ({exc}); close the other run or "
                                      f"pass a longer timeout") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


class ArenaStore:
    """The arena database (created if missing).

    Args:
        path: The ``.sqlite`` file.
        timeout: Seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        self._conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        _set_wal(self._conn, timeout)
        self._conn.execute("PRAGMA foreign_keys=ON")
        with self._write() as db:
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    db.execute(statement)
        self._check_version()

    def __repr__(self) -> str:
        return f"ArenaStore({str(self.path)!r})"

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> ArenaStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taking the lock at once (BEGIN IMMEDIATE)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _check_version(self) -> None:
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                       (str(SCHEMA_VERSION),))
        found = self.meta("schema_version")
        if found != str(SCHEMA_VERSION):
            raise ArenaStoreError(f"{self.path} has arena schema {found}, this simjudge reads "
                                  f"{SCHEMA_VERSION}; use a new run directory")

    # -- meta and policies ----------------------------------------------------------
    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a ``meta`` value."""
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def register_policies(self, specs: Mapping[str, str]) -> None:
        """Add policies ``name -> spec``; re-adding with the same spec is a no-op.

        Raises:
            ArenaStoreError: A name is already registered with another spec.
        """
        with self._write() as db:
            for name, spec in specs.items():
                row = db.execute("SELECT spec FROM policies WHERE name = ?", (name,)).fetchone()
                if row is not None and row[0] != spec:
                    raise ArenaStoreError(
                        f"policy {name!r} is already in {self.path} as {row[0]!r}, not {spec!r}; "
                        "give the new policy another name or use a new run directory")
                db.execute("INSERT OR IGNORE INTO policies VALUES (?, ?, ?)", (name, spec, _now()))

    def policies(self) -> dict[str, str]:
        """Registered policies ``name -> spec``."""
        return {str(n): str(s) for n, s in
                self._conn.execute("SELECT name, spec FROM policies ORDER BY name")}

    # -- matches --------------------------------------------------------------------
    def plan(self, match: PlannedMatch) -> bool:
        """Insert a planned match; False if its id (or index) is already planned.

        Raises:
            ArenaStoreError: The id exists with other contents (a different plan).
        """
        with self._write() as db:
            row = db.execute("SELECT idx, task, seed, handle_a, handle_b FROM matches "
                             "WHERE match_id = ? OR idx = ?", (match.match_id, match.idx)).fetchone()
            if row is not None:
                same = tuple(row) == (match.idx, match.task, match.seed, match.handle_a,
                                      match.handle_b)
                if not same:
                    raise ArenaStoreError(
                        f"match {match.match_id} (index {match.idx}) is already planned "
                        f"differently in {self.path}; resume with the same seed and settings")
                return False
            db.execute("INSERT INTO matches (match_id, idx, task, seed, handle_a, handle_b, "
                       "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (match.match_id, match.idx, match.task, match.seed, match.handle_a,
                        match.handle_b, _now()))
            db.executemany("INSERT INTO sides VALUES (?, ?, ?, ?)",
                           [(match.match_id, "A", match.handle_a, match.policy_a),
                            (match.match_id, "B", match.handle_b, match.policy_b)])
            return True

    def planned(self, status: str | None = None) -> list[PlannedMatch]:
        """Planned matches in sampling order (optionally only one ``status``)."""
        query = ("SELECT m.match_id, m.idx, m.task, m.seed, m.handle_a, m.handle_b, a.policy, "
                 "b.policy FROM matches m JOIN sides a ON a.match_id = m.match_id AND a.side = 'A' "
                 "JOIN sides b ON b.match_id = m.match_id AND b.side = 'B'")
        args: tuple[Any, ...] = ()
        if status is not None:
            query += " WHERE m.status = ?"
            args = (status,)
        rows = self._conn.execute(query + " ORDER BY m.idx", args).fetchall()
        return [PlannedMatch(str(r[0]), int(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]),
                             str(r[6]), str(r[7])) for r in rows]

    def counts(self) -> dict[str, int]:
        """Matches per status (``pending``, ``done``, ``failed``)."""
        found = dict.fromkeys(("pending", "done", "failed"), 0)
        for status, n in self._conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"):
            found[str(status)] = int(n)
        return found

    def eval_counts(self) -> dict[str, int]:
        """Planned matches per policy (the under-evaluated get sampled more)."""
        counts = dict.fromkeys(self.policies(), 0)
        for policy, n in self._conn.execute("SELECT policy, COUNT(*) FROM sides GROUP BY policy"):
            counts[str(policy)] = int(n)
        return counts

    # -- claims (several writers on one run) ----------------------------------------
    def claim(self, match_ids: list[str], owner: str, lease_s: float = 900.0) -> list[str]:
        """Claim pending matches for ``owner``; return the ones it now holds, in order.

        A match is claimed when it is still pending and nobody else holds an unexpired claim
        on it (one write transaction, so two processes never both get it). A claim expires
        after ``lease_s`` seconds: the matches of a writer that died are played by the next.
        """
        now = time.time()
        got = []
        with self._write() as db:
            for match_id in match_ids:
                row = db.execute("SELECT m.status, c.owner, c.expires FROM matches m LEFT JOIN "
                                 "claims c ON c.match_id = m.match_id WHERE m.match_id = ?",
                                 (match_id,)).fetchone()
                if row is None or row[0] != "pending":
                    continue
                if row[1] is not None and row[1] != owner and float(row[2]) > now:
                    continue
                db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)",
                           (match_id, owner, now + lease_s))
                got.append(match_id)
        return got

    def release(self, owner: str) -> None:
        """Drop ``owner``'s claims (its matches are recorded, or it gives them back)."""
        with self._write() as db:
            db.execute("DELETE FROM claims WHERE owner = ?", (owner,))

    # -- results --------------------------------------------------------------------
    def record(self, result: MatchResult) -> bool:
        """Store a verdict; False if this exact verdict is already stored.

        Raises:
            ArenaStoreError: The match is unknown, or already has a different verdict.
        """
        details = json.dumps(dict(result.details), sort_keys=True, default=str)
        values = (result.evaluator, result.progress_a, result.progress_b, result.preference,
                  result.reason, details, result.error)
        with self._write() as db:
            if db.execute("SELECT 1 FROM matches WHERE match_id = ?",
                          (result.match_id,)).fetchone() is None:
                raise ArenaStoreError(f"no match {result.match_id} in {self.path}; plan it first")
            row = db.execute("SELECT evaluator, progress_a, progress_b, preference, reason, "
                             "details, error FROM results WHERE match_id = ?",
                             (result.match_id,)).fetchone()
            if row is not None:  # the same verdict again (details may differ in timings)
                if _verdict(tuple(row)) != _verdict(values):
                    raise ArenaStoreError(
                        f"match {result.match_id} already has a different verdict in "
                        f"{self.path}; verdicts are final (start a new run to re-judge)")
                return False
            db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (result.match_id, *values, _now()))
            db.execute("UPDATE matches SET status = ? WHERE match_id = ?",
                       ("failed" if result.error else "done", result.match_id))
            return True

    def results(self) -> list[dict[str, Any]]:
        """Every played or failed match, unsealed (policies named), in sampling order."""
        rows = self._conn.execute(
            "SELECT m.match_id, m.idx, m.task, m.seed, a.policy, b.policy, r.evaluator, "
            "r.progress_a, r.progress_b, r.preference, r.reason, r.details, r.error "
            "FROM results r JOIN matches m ON m.match_id = r.match_id "
            "JOIN sides a ON a.match_id = m.match_id AND a.side = 'A' "
            "JOIN sides b ON b.match_id = m.match_id AND b.side = 'B' ORDER BY m.idx").fetchall()
        keys = ("match_id", "idx", "task", "seed", "policy_a", "policy_b", "evaluator",
                "progress_a", "progress_b", "preference", "reason", "details", "error")
        out = []
        for row in rows:
            item = dict(zip(keys, row, strict=True))
            item["details"] = json.loads(item["details"])
            out.append(item)
        return out

    def comparisons(self) -> list[Comparison]:
        """The played matches as ranking input (failed ones left out)."""
        return [Comparison(r["policy_a"], r["policy_b"], OUTCOMES[r["preference"]],
                           r["progress_a"], r["progress_b"], task=r["task"])
                for r in self.results() if not r["error"]]
