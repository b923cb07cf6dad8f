"""Training of the image progress network: regression + pairwise ranking, with augmentations.

Each step draws ``batch`` pairs of frames of one episode (the task first, uniformly, so
small tasks are not drowned; half the pairs 1–6 steps apart, as small hops matter): MSE(Φ̂,
Φ) on all their frames and softplus(−sign(ΔΦ) · (Φ̂_b − Φ̂_a) · ``rank_scale``) on the
pairs with |ΔΦ| ≥ ``min_delta``. Augmentations, per sample: RoboPulse image noise with α ≤
``max_alpha``, a masked patch (the same on both frames, as a static occluder, or on one)
and a mild colour jitter shared by the frame and its reference. Deterministic for a seed
(one CPU thread). :func:`train_image_ensemble` trains ``members`` such networks with seeds
``seed``, ``seed + 1``, ... and averages their Φ̂.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from .image_data import FRAME_SIZE, ImageBatch
from .image_model import ImageNet, ImageProgressEnsemble, ImageProgressNet

__all__ = ["ImageTrainSettings", "augment", "pair_accuracy", "predict_images",
           "train_image_ensemble", "train_image_net"]


@dataclass(frozen=True)
class ImageTrainSettings:
    """Settings of :func:`train_image_net`.

    Attributes:
        steps: Optimiser steps. batch: Pairs per step (2 × batch frames).
        lr: Adam learning rate (cosine schedule). seed: Seed of everything.
        rank_weight: Weight of the ranking loss. rank_scale: Logit scale of the ranking loss.
        min_delta: Smallest |ΔΦ| of a ranking pair.
        max_alpha: Largest image-noise α of the augmentation. p_noise: Its probability.
        p_mask: Probability of a masked patch. width: Conv width of the network.
        height: Frame height. threads: torch threads.
        members: Networks of :func:`train_image_ensemble` (seeds ``seed`` + 0, 1, ...).
    """

    steps: int = 4000
    batch: int = 64
    lr: float = 2e-3
    seed: int = 0
    rank_weight: float = 1.0
    rank_scale: float = 10.0
    min_delta: float = 0.005
    max_alpha: float = 0.12
    p_noise: float = 0.5
    p_mask: float = 0.3
    width: int = FRAME_SIZE[0]
    height: int = FRAME_SIZE[1]
    channels: int = 32
    threads: int = 1
    members: int = 1


def _to_float(frames: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(frames).permute(0, 3, 1, 2).float().div_(255.0)


def augment(current: torch.Tensor, first: torch.Tensor, settings: ImageTrainSettings,
            gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Noise, masked patches and colour jitter of a batch (see the module docstring)."""
    b, _, h, w = current.shape
    gain = (0.9 + 0.2 * torch.rand(b, 1, 1, 1, generator=gen)) * \
        (0.95 + 0.1 * torch.rand(b, 3, 1, 1, generator=gen))
    current, first = (current * gain).clamp_(0, 1), (first * gain).clamp_(0, 1)
    for i in torch.nonzero(torch.rand(b, generator=gen) < settings.p_mask)[:, 0].tolist():
        ph = int(h * (0.1 + 0.25 * torch.rand(1, generator=gen).item()))
        pw = int(w * (0.1 + 0.25 * torch.rand(1, generator=gen).item()))
        y = int(torch.randint(0, h - ph + 1, (1,), generator=gen))
        x = int(torch.randint(0, w - pw + 1, (1,), generator=gen))
        colour = torch.rand(3, 1, 1, generator=gen)
        current[i, :, y:y + ph, x:x + pw] = colour
        if torch.rand(1, generator=gen).item() < 0.5:
            first[i, :, y:y + ph, x:x + pw] = colour
    noisy = torch.nonzero(torch.rand(b, generator=gen) < settings.p_noise)[:, 0]
    alpha = torch.rand(len(noisy), 1, 1, 1, generator=gen) * settings.max_alpha
    for frames in (current, first):
        sub = frames[noisy]
        noise = torch.randn(sub.shape, generator=gen)
        frames[noisy] = ((1 - alpha) * sub + alpha * noise).clamp_(0, 1)
    return current, first


def _episode_bounds(data: ImageBatch) -> tuple[np.ndarray, np.ndarray]:
    starts = np.flatnonzero(np.r_[True, np.diff(data.episode) != 0])
    return starts, np.append(starts[1:], len(data.episode))


def _pairs(data: ImageBatch, rng: np.random.Generator, n: int,
           by_task: list[np.ndarray], bounds: tuple[np.ndarray, ...]
           ) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = bounds
    e = np.array([by_task[k][rng.integers(len(by_task[k]))]
                  for k in rng.integers(len(by_task), size=n)])
    length = ends[e] - starts[e]
    a = starts[e] + (rng.random(n) * length).astype(int)
    far = starts[e] + (rng.random(n) * length).astype(int)
    near = np.clip(a + rng.choice([-1, 1], n) * rng.integers(1, 7, n), starts[e], ends[e] - 1)
    b = np.where(rng.random(n) < 0.5, near, far)
    return a, b


def _forward(net: ImageNet, data: ImageBatch, idx: np.ndarray, task: torch.Tensor,
             settings: ImageTrainSettings | None = None, gen: torch.Generator | None = None
             ) -> torch.Tensor:
    current, first = _to_float(data.frames[idx]), _to_float(data.frames[data.first[idx]])
    if settings is not None and gen is not None:
        current, first = augment(current, first, settings, gen)
    return net(current, first, task[torch.from_numpy(data.task_ids[idx]).long()])


def train_image_net(data: ImageBatch, settings: ImageTrainSettings, progress: bool = True
                    ) -> tuple[ImageProgressNet, dict[str, Any]]:
    """Train a fresh network on ``data`` (episodes contiguous).

    Returns:
        The network (eval mode) and a log: settings, final losses.
    """
    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    gen = torch.Generator().manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    net = ImageProgressNet(width=settings.channels, size=(settings.width, settings.height))
    opt = torch.optim.AdamW(net.parameters(), lr=settings.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, settings.lr, total_steps=max(settings.steps, 1),
                                                pct_start=0.1)
    phi = torch.from_numpy(data.phi)
    task = torch.from_numpy(data.task_emb)
    bounds = _episode_bounds(data)
    by_task = [np.flatnonzero(data.task_ids[bounds[0]] == k) for k in range(len(data.tasks))]
    mse = rank = torch.tensor(0.0)
    net.train()
    for _ in tqdm(range(settings.steps), desc="train image-progress", disable=not progress):
        n = settings.batch
        a, b = _pairs(data, rng, n, by_task, bounds)
        delta = phi[b] - phi[a]
        keep = torch.abs(delta) >= settings.min_delta
        both = np.concatenate([a, b])
        pred = _forward(net, data, both, task, settings, gen)
        mse = torch.mean((pred - phi[both]) ** 2)
        diff = (pred[n:] - pred[:n]) * torch.sign(delta) * settings.rank_scale
        rank = torch.nn.functional.softplus(-diff[keep]).mean() if keep.any() else mse * 0
        loss = mse + settings.rank_weight * rank
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    net.eval()
    return net, {"settings": asdict(settings), "final_mse": float(mse.detach()),
                 "final_rank": float(rank.detach())}


def train_image_ensemble(data: ImageBatch, settings: ImageTrainSettings, progress: bool = True
                         ) -> tuple[ImageNet, dict[str, Any]]:
    """``settings.members`` networks (seeds ``seed``, ``seed + 1``, ...) averaging Φ̂.

    Returns:
        The single network when ``members`` is 1, else an :class:`ImageProgressEnsemble`;
        and a log (that of :func:`train_image_net` plus ``members``: the members' logs).
    """
    if settings.members < 1:
        raise ValueError(f"members must be >= 1, got {settings.members}")
    nets, logs = [], []
    for i in range(settings.members):
        net, log = train_image_net(data, replace(settings, seed=settings.seed + i), progress)
        nets.append(net)
        logs.append(log)
    if len(nets) == 1:
        return nets[0], {**logs[0], "members": logs}
    return ImageProgressEnsemble(nets), {"settings": asdict(settings), "members": logs}


def predict_images(net: ImageNet, data: ImageBatch, chunk: int = 256) -> np.ndarray:
    """Φ̂ of every frame of ``data`` (clean, no augmentation)."""
    task = torch.from_numpy(data.task_emb)
    out = []
    with torch.no_grad():
        for start in range(0, len(data.phi), chunk):
            idx = np.arange(start, min(start + chunk, len(data.phi)))
            out.append(_forward(net, data, idx, task).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def pair_accuracy(data: Any, pred: np.ndarray, seed: int, n_pairs: int = 600
                  ) -> dict[str, Any]:
    """Pulse-pair accuracy of predictions ``pred`` on the stored episodes of ``data``.

    ``data`` has aligned ``episode`` and ``phi`` arrays (episodes contiguous).
    """
    from ..bench import build_pulse_pairs

    ep = np.asarray(data.episode)
    ids = np.unique(ep)
    phis = [data.phi[ep == i] for i in ids]
    preds = [pred[ep == i] for i in ids]
    bins: dict[str, list[bool]] = {}
    for p in build_pulse_pairs(phis, n_pairs, seed):
        d = preds[p.episode][p.after] - preds[p.episode][p.before]
        bins.setdefault(p.bin, []).append(bool(np.sign(d) == p.label))
    acc = {k: float(np.mean(v)) for k, v in bins.items()}
    return {"overall": float(np.mean(list(acc.values()))) if acc else None, "bins": acc,
            "n": {k: len(v) for k, v in bins.items()}}
