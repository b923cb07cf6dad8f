"""The exemplar task pool (VERGSA's E.T.P.): successful solutions, retrieved by meaning.

Every executed solution can be recorded with its outcome; only tasks with a successful
solution serve as exemplars. A new task's ``"name: description"`` is embedded (MiniLM by
default) and compared by cosine similarity with every exemplar task; the top-k (k=2 in
the paper) become in-context examples for the proposer. The pool also ships a seed of
verified solutions (:mod:`simjudge.pipelines.pool_seed`).

Storage is one SQLite file in WAL mode, so one writer and any number of readers (other
processes, e.g. parallel proposers) work at once:

    ``tasks(id, name UNIQUE, description, asset, tags JSON, created)``
    ``solutions(id, task_id, yaml, source, created)``, unique per (task, yaml)
    ``outcomes(id, solution_id, task_success, subtask_success JSON, run_dir, key, created)``,
    unique per (solution, key)
    ``embeddings(task_id, model, dim, vector float32 BLOB)``, one row per (task, model)

Writes are idempotent: an outcome's ``key`` (by default its run directory, made absolute)
identifies it, so recording the same execution again (a resumed ``acquire`` reading its
checkpoints back) adds nothing, and seeding runs in one transaction with ``INSERT OR
IGNORE``, so any number of processes creating and seeding the pool at once leave exactly
one copy of each seed solution and outcome. Outcomes without a key (a bare bool) are
appended every time.

Vectors are computed lazily (at the first query) for the pool's embedder, so seeding and
recording never load a model, and switching embedders re-embeds rather than mixing models.

Example:
    >>> from simjudge.llm import HashingEmbedder
    >>> pool = ExemplarPool(":memory:", embedder=HashingEmbedder())
    >>> len(pool)
    0
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.llm.embeddings import Embedder, MiniLMEmbedder
from simjudge.pipelines.embedding_cache import cached_embed, query_cache_path
from simjudge.pipelines.pool_seed import PoolError, TaskFields
from simjudge.tasks.spec import Solution

__all__ = ["Exemplar", "ExemplarPool", "PoolEntry", "PoolError", "PoolTask", "TaskFields"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, description TEXT NOT NULL,
    asset TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '[]', created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS solutions(
    id INTEGER PRIMARY KEY, task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    yaml TEXT NOT NULL, source TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,
    UNIQUE(task_id, yaml));
CREATE TABLE IF NOT EXISTS outcomes(
    id INTEGER PRIMARY KEY,
    solution_id INTEGER NOT NULL REFERENCES solutions(id) ON DELETE CASCADE,
    task_success INTEGER NOT NULL, subtask_success TEXT NOT NULL DEFAULT '[]',
    run_dir TEXT, created TEXT NOT NULL, key TEXT);
CREATE TABLE IF NOT EXISTS embeddings(
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE, model TEXT NOT NULL,
    dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(task_id, model));
CREATE INDEX IF NOT EXISTS solutions_task ON solutions(task_id);
CREATE INDEX IF NOT EXISTS outcomes_solution ON outcomes(solution_id);
"""

# After the migration of pools made before outcome keys (the column is added first).
_OUTCOME_KEY_INDEX = ("CREATE UNIQUE INDEX IF NOT EXISTS outcomes_key "
                      "ON outcomes(solution_id, key)")
SEED_KEY = "seed"
"""Outcome key of the verified outcome recorded with a seed solution."""

# Latest successful solution of each task that has one.
_EXEMPLARS = """
SELECT t.id, t.name, t.description, t.asset, t.tags, s.id, s.yaml
FROM tasks t JOIN solutions s ON s.id = (
    SELECT s2.id FROM solutions s2 JOIN outcomes o ON o.solution_id = s2.id
    WHERE s2.task_id = t.id AND o.task_success = 1 ORDER BY s2.id DESC LIMIT 1)
ORDER BY t.id
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Exemplar:
    """A retrieved pooled task with its successful solution.

    The first four fields match :class:`simjudge.pipelines.proposer.Exemplar`, so pool results
    go straight into a proposer.

    Attributes:
        task: Task name.
        description: Task description.
        solution: The (latest) successful solution.
        similarity: Cosine similarity to the query in [-1, 1].
        asset: Main object's catalogue id.
        tags: Task labels.
        task_id: Row id in ``tasks`` (provenance).
        solution_id: Row id in ``solutions`` (provenance).
    """

    task: str
    description: str
    solution: Solution
    similarity: float = 0.0
    asset: str = ""
    tags: tuple[str, ...] = ()
    task_id: int = 0
    solution_id: int = 0

    @property
    def name(self) -> str:
        """Alias of :attr:`task`."""
        return self.task

    def provenance(self) -> dict[str, Any]:
        """Compact record for a proposal's provenance."""
        return {"task": self.task, "similarity": round(self.similarity, 4),
                "solution_id": self.solution_id}


@dataclass(frozen=True)
class PoolTask:
    """One row of :meth:`ExemplarPool.list`."""

    name: str
    description: str
    asset: str
    tags: tuple[str, ...]
    created: str
    n_solutions: int
    n_successful: int


@dataclass(frozen=True)
class PoolEntry:
    """Everything stored about one task (:meth:`ExemplarPool.show`).

    Attributes:
        task: The task row with counts.
        solutions: ``{"id", "source", "created", "solution", "outcomes": [...]}`` per
            solution, oldest first; each outcome has ``task_success``,
            ``subtask_success``, ``run_dir`` and ``created``.
    """

    task: PoolTask
    solutions: list[dict[str, Any]] = field(default_factory=list)


def _outcome_row(outcome: Any, key: str | None = None) -> tuple[int, str, str | None, str | None]:
    """``(task_success, subtask_success JSON, run_dir, key)`` of an outcome.

    The key is ``key`` if given, else the outcome's run directory (``run_dir``, or an
    :class:`~simjudge.tasks.spec.Outcome`'s ``out_dir``) made absolute, else None.
    """
    if isinstance(outcome, bool):
        return int(outcome), "[]", None, key
    get = outcome.get if isinstance(outcome, Mapping) else (
        lambda k, d=None: getattr(outcome, k, d))
    success = get("task_success")
    if not isinstance(success, bool | np.bool_):
        raise PoolError(f"outcome.task_success must be a bool, got {success!r}")
    subtasks = [bool(x) for x in (get("subtask_success", ()) or ())]
    run_dir = get("run_dir") or get("out_dir") or None
    if key is None and run_dir is not None:
        key = os.path.abspath(str(run_dir))
    return int(success), json.dumps(subtasks), None if run_dir is None else str(run_dir), key


class ExemplarPool:
    """SQLite-backed exemplar pool with embedding retrieval.

    Args:
        path: Database file (created with its folder), or ``":memory:"``.
        embedder: Sentence embedder; default :class:`MiniLMEmbedder` (loaded at the
            first query, needs the ``sentence-transformers`` extra).
        timeout_s: How long a writer waits for the lock held by another process.
    """

    def __init__(self, path: str | Path, *, embedder: Embedder | None = None,
                 timeout_s: float = 30.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.embedder: Embedder = embedder if embedder is not None else MiniLMEmbedder()
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None,
                                     check_same_thread=False)
        try:
            self._setup(timeout_s)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise PoolError(f"{self.path} is not a usable exemplar pool: {exc}") from None
        self._matrix_key: tuple[int, int, str] | None = None
        self._matrix: tuple[list[tuple], np.ndarray] = ([], np.zeros((0, 0), np.float32))

    # -- plumbing ----------------------------------------------------------------------
    def _setup(self, timeout_s: float) -> None:
        """Journal mode, pragmas and schema (with the outcome-key migration).

        Switching a new file to WAL while another process does the same can fail at once
        with "database is locked" (SQLite does not call the busy handler there), so the
        setup is retried until ``timeout_s``; the schema itself is one transaction.
        """
        deadline = time.monotonic() + timeout_s
        delay = 0.01
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
                self._conn.execute("PRAGMA foreign_keys=ON")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                with self._tx() as conn:
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        conn.execute(statement)
                    columns = {row[1] for row in conn.execute("PRAGMA table_info(outcomes)")}
                    if "key" not in columns:  # a pool made before outcome keys
                        conn.execute("ALTER TABLE outcomes ADD COLUMN key TEXT")
                    conn.execute(_OUTCOME_KEY_INDEX)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ExemplarPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def journal_mode(self) -> str:
        """SQLite journal mode (``wal`` for files; ``memory`` for ``:memory:``)."""
        return str(self._query("PRAGMA journal_mode")[0][0])

    # -- writing -----------------------------------------------------------------------
    def _upsert_task(self, conn: sqlite3.Connection, task: TaskFields) -> int:
        row = conn.execute("SELECT id, description, asset, tags FROM tasks WHERE name = ?",
                           (task.name,)).fetchone()
        tags = json.dumps(list(task.tags))
        if row is None:
            cur = conn.execute(
                "INSERT INTO tasks(name, description, asset, tags, created) VALUES(?,?,?,?,?)",
                (task.name, task.description, task.asset, tags, _now()))
            assert cur.lastrowid is not None, "an INSERT sets lastrowid"
            return cur.lastrowid
        task_id, desc, asset, old_tags = row
        if task.description and task.description != desc:
            conn.execute("UPDATE tasks SET description = ? WHERE id = ?",
                         (task.description, task_id))
            conn.execute("DELETE FROM embeddings WHERE task_id = ?", (task_id,))
        if (task.asset and task.asset != asset) or (task.tags and tags != old_tags):
            conn.execute("UPDATE tasks SET asset = ?, tags = ? WHERE id = ?",
                         (task.asset or asset, tags if task.tags else old_tags, task_id))
        return int(task_id)

    def add_task(self, task: Any, solution: Solution, outcome: Any = None, *,
                 source: str = "", key: str | None = None) -> int:
        """Record a task, one of its solutions and (optionally) an execution outcome.

        Failed outcomes are stored too (useful for audits); only tasks with a successful
        outcome are retrieved as exemplars. Adding the same solution again only adds the
        new outcome; adding an outcome whose key is already recorded for the solution adds
        nothing (idempotent: a resumed run records each execution once).

        Args:
            task: Task fields (see :meth:`TaskFields.coerce`).
            solution: The solution.
            outcome: None, a bool, or an object/mapping with ``task_success``,
                optional ``subtask_success`` and ``run_dir`` (e.g. ``Outcome``, whose
                ``out_dir`` counts as its run directory).
            source: Where the solution came from (``seed:...``, a proposer name).
            key: What identifies the outcome (default: its run directory, made absolute;
                an outcome with neither is appended every time).

        Returns:
            The solution's row id.
        """
        fields = TaskFields.coerce(task)
        if not isinstance(solution, Solution):
            raise PoolError(f"solution must be a Solution, got {type(solution).__name__}")
        out = None if outcome is None else _outcome_row(outcome, key)
        with self._tx() as conn:
            sol_id, _ = self._insert(conn, fields, solution, source, out)
        return sol_id

    def _insert(self, conn: sqlite3.Connection, fields: TaskFields, solution: Solution,
                source: str, out: tuple[int, str, str | None, str | None] | None,
                ) -> tuple[int, bool]:
        """Task, solution and outcome rows inside an open transaction: (solution id, new?)."""
        task_id = self._upsert_task(conn, fields)
        text = solution.to_yaml()
        cur = conn.execute("INSERT OR IGNORE INTO solutions(task_id, yaml, source, created) "
                           "VALUES(?,?,?,?)", (task_id, text, source, _now()))
        sol_id = int(conn.execute("SELECT id FROM solutions WHERE task_id = ? AND yaml = ?",
                                  (task_id, text)).fetchone()[0])
        if out is not None:
            conn.execute("INSERT OR IGNORE INTO outcomes(solution_id, task_success, "
                         "subtask_success, run_dir, key, created) VALUES(?,?,?,?,?,?)",
                         (sol_id, *out, _now()))
        return sol_id, cur.rowcount == 1

    def append_success(self, task: Any, solution: Solution, outcome: Any, *,
                       source: str = "", key: str | None = None) -> int | None:
        """Add a solution only if its outcome succeeded (the VERGSA pool update).

        Idempotent like :meth:`add_task`: the same outcome (same ``key``, by default its
        run directory) is recorded once however often it is appended.

        Returns:
            The solution's row id, or None when the outcome was a failure (nothing stored).
        """
        if not bool(_outcome_row(outcome)[0]):
            return None
        return self.add_task(task, solution, outcome, source=source, key=key)

    def seed_from(self, items: Iterable[tuple[Any, Solution]], *, source: str = "seed") -> int:
        """Add verified solutions as successful exemplars; already present pairs are skipped.

        All of it is one transaction: processes seeding the same pool at once (e.g. its
        first users creating it together) are serialised, and the second finds every pair
        present, so each seed solution and its verified outcome are stored once.

        Args:
            items: ``(task fields, solution)`` pairs, e.g. from
                :func:`simjudge.pipelines.pool_seed.load_exemplars`.
            source: Source label stored with each solution.

        Returns:
            Number of solutions newly added.
        """
        rows = [(TaskFields.coerce(task), solution) for task, solution in items]
        added = 0
        with self._tx() as conn:
            for fields, solution in rows:
                present = conn.execute(
                    "SELECT 1 FROM solutions s JOIN tasks t ON t.id = s.task_id "
                    "WHERE t.name = ? AND s.yaml = ?", (fields.name, solution.to_yaml()),
                ).fetchone()
                if present:
                    continue
                verified = (1, json.dumps([True] * len(solution.subtasks)), None, SEED_KEY)
                added += self._insert(conn, fields, solution, source, verified)[1]
        return added

    # -- retrieval ---------------------------------------------------------------------
    def _exemplar_matrix(self) -> tuple[list[tuple], np.ndarray]:
        """Exemplar rows and their unit vectors, embedding missing ones.

        The result is cached until any connection commits.
        """
        with self._lock:
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            key = (version, self._conn.total_changes, self.embedder.name)
            if key == self._matrix_key:
                return self._matrix
            rows = self._conn.execute(_EXEMPLARS).fetchall()
            stored = dict(self._conn.execute(
                "SELECT task_id, vector FROM embeddings WHERE model = ? AND dim = ?",
                (self.embedder.name, self.embedder.dim)).fetchall())
            missing = [r for r in rows if r[0] not in stored]
            if missing:
                texts = [TaskFields(r[1], r[2]).text for r in missing]
                vectors = self.embedder.embed(texts)
                with self._tx() as conn:
                    conn.executemany(
                        "INSERT OR REPLACE INTO embeddings(task_id, model, dim, vector) "
                        "VALUES(?,?,?,?)",
                        [(r[0], self.embedder.name, self.embedder.dim,
                          np.asarray(v, np.float32).tobytes()) for r, v in zip(
                              missing, vectors, strict=True)])
                stored.update({r[0]: np.asarray(v, np.float32).tobytes()
                               for r, v in zip(missing, vectors, strict=True)})
            matrix = (np.stack([np.frombuffer(stored[r[0]], np.float32) for r in rows])
                      if rows else np.zeros((0, self.embedder.dim), np.float32))
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            self._matrix_key = (version, self._conn.total_changes, self.embedder.name)
            self._matrix = (rows, matrix)
            return self._matrix

    def _rank(self, text: str, k: int, exclude: set[str]) -> list[Exemplar]:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        rows, matrix = self._exemplar_matrix()
        if not rows:
            return []
        query = cached_embed(self.embedder, [text], query_cache_path(self.path))[0]
        sims = matrix @ query
        out: list[Exemplar] = []
        for i in np.argsort(-sims, kind="stable"):
            task_id, name, desc, asset, tags, sol_id, text_yaml = rows[i]
            if name in exclude:
                continue
            out.append(Exemplar(name, desc, Solution.from_yaml(text_yaml), float(sims[i]),
                                asset, tuple(json.loads(tags)), task_id, sol_id))
            if len(out) == k:
                break
        return out

    def top_k(self, name: str, description: str = "", k: int = 2, *,
              exclude: Iterable[str] | None = None) -> list[Exemplar]:
        """The ``k`` exemplar tasks most similar to a task, best first.

        Args:
            name: Task name.
            description: Task description.
            k: How many (VERGSA uses 2).
            exclude: Task names never returned; default ``{name}`` so a task is not its
                own example (pass ``()`` to allow it).
        """
        skip = {name} if exclude is None else set(exclude)
        return self._rank(TaskFields(name, description).text, k, skip)

    def search(self, text: str, k: int = 5) -> list[Exemplar]:
        """Exemplar tasks most similar to free text, best first."""
        return self._rank(text, k, set())

    # -- inspection --------------------------------------------------------------------
    def list(self) -> list[PoolTask]:
        """All recorded tasks (exemplars or not) with solution counts, by name."""
        rows = self._query(
            "SELECT t.name, t.description, t.asset, t.tags, t.created, "
            "(SELECT COUNT(*) FROM solutions s WHERE s.task_id = t.id), "
            "(SELECT COUNT(DISTINCT s.id) FROM solutions s JOIN outcomes o "
            " ON o.solution_id = s.id WHERE s.task_id = t.id AND o.task_success = 1) "
            "FROM tasks t ORDER BY t.name")
        return [PoolTask(n, d, a, tuple(json.loads(tg)), c, ns, ok)
                for n, d, a, tg, c, ns, ok in rows]

    def show(self, name: str) -> PoolEntry:
        """Everything stored about one task.

        Raises:
            PoolError: Unknown name (the message suggests close names).
        """
        task = next((t for t in self.list() if t.name == name), None)
        if task is None:
            import difflib

            names = [t.name for t in self.list()]
            close = difflib.get_close_matches(name, names, n=3)
            raise PoolError(f"no task {name!r} in the pool"
                            + (f"; did you mean {close}?" if close else ""))
        sols = self._query("SELECT s.id, s.source, s.created, s.yaml FROM solutions s "
                           "JOIN tasks t ON t.id = s.task_id WHERE t.name = ? ORDER BY s.id",
                           (name,))
        entries = []
        for sol_id, source, created, text in sols:
            outcomes = [{"task_success": bool(ok), "subtask_success": json.loads(sub),
                         "run_dir": run_dir, "created": c} for ok, sub, run_dir, c in
                        self._query("SELECT task_success, subtask_success, run_dir, created "
                                    "FROM outcomes WHERE solution_id = ? ORDER BY id",
                                    (sol_id,))]
            entries.append({"id": sol_id, "source": source, "created": created,
                            "solution": Solution.from_yaml(text), "outcomes": outcomes})
        return PoolEntry(task, entries)

    def __len__(self) -> int:
        """Number of exemplar tasks (tasks with a successful solution)."""
        return int(self._query(
            "SELECT COUNT(DISTINCT s.task_id) FROM solutions s JOIN outcomes o "
            "ON o.solution_id = s.id WHERE o.task_success = 1")[0][0])

    def __repr__(self) -> str:
        return f"ExemplarPool({self.path!r}, embedder={self.embedder.name!r})"
