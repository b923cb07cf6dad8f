"""NPZ shards of featurised rollouts: one shard per (task, seed), written atomically.

A shard holds, per state: token numbers (padded to :data:`MAX_TOKENS`), a mask, robot
numbers, the privileged Φ label, the episode index and the step; plus the task-text and
token-text MiniLM embeddings (so training never loads the encoder).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .features import GLOBAL_FEATURES, TOKEN_FEATURES, scene_features
from .model import EMBED_DIM

__all__ = ["MAX_TOKENS", "Batch", "concat_shards", "featurize_states", "load_shard",
           "save_shard"]

MAX_TOKENS = 12
"""Tokens per state (scenes with more are cut; the library's largest has 6)."""


@dataclass
class Batch:
    """Featurised states (arrays aligned on the first axis).

    Attributes:
        tokens: ``(N, T, F)``. mask: ``(N, T)``. globals_: ``(N, G)``.
        text_ids: ``(N, T)`` rows of ``text_emb``. task_ids: ``(N,)`` rows of ``task_emb``.
        text_emb: ``(n_texts, 384)``. task_emb: ``(n_tasks, 384)``.
        phi: ``(N,)`` labels. episode: ``(N,)`` global episode ids. step: ``(N,)``.
        tasks: Task id per row of ``task_emb``.
    """

    tokens: np.ndarray
    mask: np.ndarray
    globals_: np.ndarray
    text_ids: np.ndarray
    task_ids: np.ndarray
    text_emb: np.ndarray
    task_emb: np.ndarray
    phi: np.ndarray
    episode: np.ndarray
    step: np.ndarray
    tasks: list[str]


def featurize_states(view_of: Any, n_states: int, texts: list[str]) -> tuple[np.ndarray, ...]:
    """Tokens of ``n_states`` states; ``view_of(i)`` restores state i and returns its view.

    ``texts`` collects token texts (new ones appended); returns tokens, mask, globals and
    text ids.
    """
    tokens = np.zeros((n_states, MAX_TOKENS, len(TOKEN_FEATURES)), np.float32)
    mask = np.zeros((n_states, MAX_TOKENS), bool)
    globals_ = np.zeros((n_states, len(GLOBAL_FEATURES)), np.float32)
    ids = np.zeros((n_states, MAX_TOKENS), np.int32)
    for i in range(n_states):
        f = scene_features(view_of(i))
        n = min(len(f.texts), MAX_TOKENS)
        tokens[i, :n], mask[i, :n], globals_[i] = f.tokens[:n], True, f.globals_
        for j, text in enumerate(f.texts[:n]):
            if text not in texts:
                texts.append(text)
            ids[i, j] = texts.index(text)
    return tokens, mask, globals_, ids


def save_shard(path: str | Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write a shard atomically (a crash leaves no half shard: runs resume by file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npz")
    payload: dict[str, Any] = {"__meta__": np.array(json.dumps(meta, sort_keys=True)),
                               **arrays}
    np.savez_compressed(tmp, **payload)
    tmp.replace(path)


def load_shard(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays and meta of a shard."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        return {k: data[k] for k in data.files if k != "__meta__"}, meta


def concat_shards(paths: Sequence[str | Path]) -> Batch:
    """All shards as one :class:`Batch` (episode ids made global, embeddings deduplicated)."""
    parts: dict[str, list[np.ndarray]] = {k: [] for k in
                                          ("tokens", "mask", "globals", "text_ids", "phi",
                                           "episode", "step", "task_ids")}
    text_rows: dict[str, int] = {}
    text_emb: list[np.ndarray] = []
    tasks: list[str] = []
    task_emb: list[np.ndarray] = []
    offset = 0
    for path in paths:
        a, meta = load_shard(path)
        remap = np.zeros(len(meta["texts"]), np.int32)
        for i, text in enumerate(meta["texts"]):
            if text not in text_rows:
                text_rows[text] = len(text_emb)
                text_emb.append(a["text_emb"][i])
            remap[i] = text_rows[text]
        if meta["task"] not in tasks:
            tasks.append(meta["task"])
            task_emb.append(a["task_emb"])
        n = len(a["phi"])
        parts["tokens"].append(a["tokens"])
        parts["mask"].append(a["mask"])
        parts["globals"].append(a["globals"])
        parts["text_ids"].append(remap[a["text_ids"]])
        parts["phi"].append(a["phi"])
        parts["episode"].append(a["episode"] + offset)
        parts["step"].append(a["step"])
        parts["task_ids"].append(np.full(n, tasks.index(meta["task"]), np.int32))
        offset += int(a["episode"].max()) + 1 if n else 0
    if not parts["phi"]:
        raise ValueError("no shards to load; build them with `simjudge judges dataset`")
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    return Batch(cat["tokens"], cat["mask"], cat["globals"], cat["text_ids"], cat["task_ids"],
                 np.stack(text_emb).astype(np.float32).reshape(-1, EMBED_DIM),
                 np.stack(task_emb).astype(np.float32), cat["phi"].astype(np.float32),
                 cat["episode"], cat["step"], tasks)
