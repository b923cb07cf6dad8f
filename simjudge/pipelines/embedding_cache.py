"""Sentence embeddings kept on disk, so that a model loads only for texts never embedded.

Why: a template ``simjudge acquire`` spent most of its wall time loading
sentence-transformers and torch to embed one query text, the same text on every run. The
exemplar pool already keeps its tasks' vectors in its database; :func:`cached_embed` keeps the
query vectors in a small SQLite file next to it (``<pool>.queries.sqlite``), keyed by the
model's name and dimension and the text's SHA-256. A vector read back is the one the model
produced for that text (float32 bytes), so retrieval ranks exactly as before; only a text the
cache has never seen loads the model (which is then reused for the process, as before).

Example:
    >>> import tempfile
    >>> from simjudge.llm.embeddings import HashingEmbedder
    >>> folder = tempfile.mkdtemp()
    >>> first = cached_embed(HashingEmbedder(), ["open the drawer"], f"{folder}/q.sqlite")
    >>> again = cached_embed(HashingEmbedder(), ["open the drawer"], f"{folder}/q.sqlite")
    >>> bool((first == again).all()), first.shape
    (True, (1, 256))
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from simjudge.llm.embeddings import Embedder

__all__ = ["QUERY_CACHE_SUFFIX", "cached_embed", "query_cache_path"]

QUERY_CACHE_SUFFIX = ".queries.sqlite"
"""Suffix of the query-vector cache next to a pool file."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors(model TEXT NOT NULL, dim INTEGER NOT NULL, "
    "key TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(model, dim, key))"
)


def query_cache_path(pool_path: str | Path) -> Path | None:
    """Where the query vectors of the pool at ``pool_path`` are kept (None for ``:memory:``)."""
    if str(pool_path) == ":memory:":
        return None
    pool = Path(pool_path)
    return pool.with_name(pool.name + QUERY_CACHE_SUFFIX)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached_embed(embedder: Embedder, texts: Sequence[str], path: str | Path | None) -> np.ndarray:
    """``embedder.embed(texts)``, reading and writing the vectors kept at ``path``.

    Only the texts missing from the file are given to the embedder (one batch); their
    vectors are stored (``INSERT OR IGNORE``: concurrent writers agree). ``path`` None embeds
    without a cache. A cache file that cannot be used (corrupt, read-only) is bypassed: the
    vectors are computed as if there were none.

    Returns:
        ``(len(texts), embedder.dim)`` float32 unit rows, in the order of ``texts``.
    """
    if path is None or not texts:
        return np.asarray(embedder.embed(list(texts)), np.float32)
    keys = [_key(t) for t in texts]
    try:
        stored = _read(Path(path), embedder, keys)
    except sqlite3.Error:
        return np.asarray(embedder.embed(list(texts)), np.float32)
    todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in stored))
    if todo:
        vectors = np.asarray(embedder.embed(todo), np.float32)
        fresh = {_key(t): v.tobytes() for t, v in zip(todo, vectors, strict=True)}
        stored.update(fresh)
        try:
            _write(Path(path), embedder, fresh)
        except sqlite3.Error:
            pass  # the vectors are right; only the cache could not keep them
    return np.stack([np.frombuffer(stored[k], np.float32) for k in keys])


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    conn.execute(_SCHEMA)
    return conn


def _read(path: Path, embedder: Embedder, keys: list[str]) -> dict[str, bytes]:
    if not path.exists():
        return {}
    conn = _connect(path)
    try:
        marks = ",".join("?" * len(keys))
        rows = conn.execute(
            f"SELECT key, vector FROM vectors WHERE model = ? AND dim = ? AND key IN ({marks})",
            (embedder.name, embedder.dim, *keys),
        ).fetchall()
    finally:
        conn.close()
    return {key: bytes(vector) for key, vector in rows}


def _write(path: Path, embedder: Embedder, vectors: dict[str, bytes]) -> None:
    conn = _connect(path)
    try:
        conn.executemany(
            "INSERT OR IGNORE INTO vectors(model, dim, key, vector) VALUES(?,?,?,?)",
            [(embedder.name, embedder.dim, key, blob) for key, blob in vectors.items()],
        )
    finally:
        conn.close()
