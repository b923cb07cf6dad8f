"""Training of the observation progress network: regression + pairwise ranking.

Loss = MSE(Φ̂, Φ) + ``rank_weight`` · softplus(−sign(ΔΦ) · (Φ̂_b − Φ̂_a) · ``rank_scale``)
over pairs of states of one episode with |ΔΦ| ≥ ``min_delta`` (so small hops order
correctly). Deterministic for a seed (one CPU thread).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from .data import Batch
from .model import ObsProgressNet

__all__ = ["TrainSettings", "predict", "train_net"]


@dataclass(frozen=True)
class TrainSettings:
    """Settings of :func:`train_net`.

    Attributes:
        steps: Optimiser steps. batch: States (and pairs) per step. lr: Adam rate.
        rank_weight: Weight of the ranking loss. rank_scale: Logit scale of ΔΦ̂.
        min_delta: Smallest |ΔΦ| of a ranking pair. hidden: MLP width. seed: Seed.
    """

    steps: int = 3000
    batch: int = 256
    lr: float = 2e-3
    rank_weight: float = 1.0
    rank_scale: float = 40.0
    min_delta: float = 0.005
    hidden: int = 96
    seed: int = 0


def _run(net: ObsProgressNet, data: Batch, idx: np.ndarray, task_table: torch.Tensor,
         text_table: torch.Tensor) -> torch.Tensor:
    """Φ̂ of rows ``idx``; the text tables are projected once per call, then gathered."""
    t = net.task_proj(task_table)[torch.from_numpy(data.task_ids[idx]).long()]
    k = net.token_proj(text_table)[torch.from_numpy(data.text_ids[idx]).long()]
    return net.core(t, k, torch.from_numpy(data.tokens[idx]),
                    torch.from_numpy(data.globals_[idx]), torch.from_numpy(data.mask[idx]))


def predict(net: ObsProgressNet, data: Batch, chunk: int = 4096) -> np.ndarray:
    """Φ̂ of every state of ``data``."""
    out = []
    tables = torch.from_numpy(data.task_emb), torch.from_numpy(data.text_emb)
    with torch.no_grad():
        for start in range(0, len(data.phi), chunk):
            idx = np.arange(start, min(start + chunk, len(data.phi)))
            out.append(_run(net, data, idx, tables[0], tables[1]).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def _balanced(by_task: list[np.ndarray], rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` state rows, the task drawn uniformly first (small tasks are not drowned)."""
    tasks = rng.integers(len(by_task), size=n)
    return np.array([rows[rng.integers(len(rows))] for rows in (by_task[k] for k in tasks)])


def _pair_sampler(data: Batch, rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    starts = np.searchsorted(data.episode, np.unique(data.episode))
    ends = np.append(starts[1:], len(data.episode))
    e = rng.integers(len(starts), size=n)
    a = starts[e] + (rng.random(n) * (ends[e] - starts[e])).astype(int)
    b = starts[e] + (rng.random(n) * (ends[e] - starts[e])).astype(int)
    return a, b


def train_net(data: Batch, settings: TrainSettings, progress: bool = True
              ) -> tuple[ObsProgressNet, dict[str, Any]]:
    """Train a fresh network on ``data`` (episodes must be contiguous and sorted by id).

    Returns:
        The network (eval mode) and a log: settings, final losses.
    """
    torch.set_num_threads(1)
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    net = ObsProgressNet(hidden=settings.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(settings.steps, 1))
    phi = torch.from_numpy(data.phi)
    by_task = [np.flatnonzero(data.task_ids == k) for k in range(len(data.tasks))]
    tables = torch.from_numpy(data.task_emb), torch.from_numpy(data.text_emb)
    mse = rank = torch.tensor(0.0)
    for _ in tqdm(range(settings.steps), desc="train obs-progress", disable=not progress):
        idx = _balanced(by_task, rng, settings.batch)
        a, b = _pair_sampler(data, rng, settings.batch)
        delta = phi[b] - phi[a]
        keep = torch.abs(delta) >= settings.min_delta
        pred = _run(net, data, np.concatenate([idx, a, b]), *tables)
        n = settings.batch
        mse = torch.mean((pred[:n] - phi[idx]) ** 2)
        diff = (pred[2 * n:] - pred[n:2 * n]) * torch.sign(delta) * settings.rank_scale
        rank = torch.nn.functional.softplus(-diff[keep]).mean() if keep.any() else mse * 0
        loss = mse + settings.rank_weight * rank
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    net.eval()
    return net, {"settings": asdict(settings), "final_mse": float(mse.detach()),
                 "final_rank": float(rank.detach())}
