"""The image progress network: a small CNN over (current, first, difference) frames + task text.

Input: the current frame and the episode's first frame (reference), both
:data:`~.image_data.FRAME_SIZE` RGB in [0, 1], stacked with their difference (9 channels).
A 4×4 patch stem (stride 4) and three strided 3×3 conv blocks (GroupNorm, SiLU) are
modulated by the projected MiniLM task-text embedding (FiLM: per-channel scale and shift)
from the second block on; the last feature map is flattened (where things are matters) and
an MLP gives Φ̂ = sigmoid(·) ∈ [0, 1]. About 4.6 M multiply-adds per frame at 96×72.
:class:`ImageProgressEnsemble` averages Φ̂ of several such networks (trained with different
seeds); both are saved to and loaded from one weights file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .model import EMBED_DIM

__all__ = ["ImageProgressEnsemble", "ImageProgressNet", "load_image_net", "save_image_net"]


class _Block(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int = 3, stride: int = 2) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride=stride,
                              padding=kernel // 2 if stride == 2 else 0)
        self.norm = nn.GroupNorm(8, cout)

    def forward(self, x: torch.Tensor, film: torch.Tensor | None = None) -> torch.Tensor:
        x = self.norm(self.conv(x))
        if film is not None:
            scale, shift = film.chunk(2, dim=-1)
            x = x * (1 + scale[..., None, None]) + shift[..., None, None]
        return nn.functional.silu(x)


class ImageProgressNet(nn.Module):
    """Φ̂ from a frame, the episode's first frame and the task text (module docstring).

    Args:
        width: Channels of the stem (then ×1.5, ×2, ×3).
        size: (width, height) of input frames.
        text_dim: Width of the projected task-text embedding.
    """

    def __init__(self, width: int = 32, size: tuple[int, int] = (96, 72),
                 text_dim: int = 64) -> None:
        super().__init__()
        self.width, self.size, self.text_dim = width, tuple(size), text_dim
        chans = [width, 3 * width // 2, 2 * width, 3 * width]
        self.blocks = nn.ModuleList([_Block(9, chans[0], 4, 4), _Block(chans[0], chans[1]),
                                     _Block(chans[1], chans[2]), _Block(chans[2], chans[3])])
        self.text = nn.Sequential(nn.Linear(EMBED_DIM, text_dim), nn.SiLU())
        self.films = nn.ModuleList([nn.Linear(text_dim, 2 * c) for c in chans[1:]])
        w, h = size
        w, h = w // 4, h // 4
        for _ in range(3):
            w, h = (w + 1) // 2, (h + 1) // 2
        self.head = nn.Sequential(
            nn.Linear(chans[3] * w * h, 128), nn.SiLU(), nn.Linear(128 + text_dim, 64),
        )
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(64, 1))

    def forward(self, current: torch.Tensor, first: torch.Tensor,
                task: torch.Tensor) -> torch.Tensor:
        """Φ̂ of a batch.

        Args:
            current: ``(B, 3, H, W)`` frames in [0, 1].
            first: ``(B, 3, H, W)`` first frames of the episodes in [0, 1].
            task: ``(B, 384)`` task-text embeddings.

        Returns:
            ``(B,)`` Φ̂ in [0, 1].
        """
        x = torch.cat([current - 0.5, first - 0.5, 2.0 * (current - first)], dim=1)
        t = self.text(task)
        x = self.blocks[0](x)
        for block, film in zip(self.blocks[1:], self.films, strict=True):
            x = block(x, film(t))
        h = self.head[1](self.head[0](x.flatten(1)))
        h = self.head[2](torch.cat([h, t], dim=-1))
        return torch.sigmoid(self.out(h)[:, 0])


class ImageProgressEnsemble(nn.Module):
    """Mean Φ̂ of several :class:`ImageProgressNet` of one architecture.

    Args:
        members: The networks (same ``width``, ``size`` and ``text_dim``).

    Raises:
        ValueError: No members, or members of different architectures.
    """

    def __init__(self, members: list[ImageProgressNet]) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one network")
        first = members[0]
        if any((m.width, m.size, m.text_dim) != (first.width, first.size, first.text_dim)
               for m in members):
            raise ValueError("ensemble members must share width, size and text_dim")
        self.width, self.size, self.text_dim = first.width, first.size, first.text_dim
        self.members = nn.ModuleList(members)

    def forward(self, current: torch.Tensor, first: torch.Tensor,
                task: torch.Tensor) -> torch.Tensor:
        """Mean of the members' Φ̂ (arguments as :meth:`ImageProgressNet.forward`)."""
        return torch.stack([m(current, first, task) for m in self.members]).mean(dim=0)


ImageNet = ImageProgressNet | ImageProgressEnsemble
"""A single network or an ensemble: both map (current, first, task) to Φ̂ and have ``size``."""


def save_image_net(net: ImageNet, path: str | Path, meta: dict[str, Any]) -> str:
    """Write weights (NPZ of float32 arrays + JSON meta) and ``<path>.sha256``; return the hash.

    An ensemble is stored as its members' arrays (``members.<i>.`` prefixes) with
    ``arch.members`` = their number.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    arch = {"width": net.width, "size": list(net.size), "text_dim": net.text_dim}
    if isinstance(net, ImageProgressEnsemble):
        arch["members"] = len(net.members)
    payload: dict[str, Any] = {"__meta__": np.array(json.dumps({**meta, "arch": arch},
                                                               default=str)), **arrays}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **payload)
    tmp.replace(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return digest


def load_image_net(path: str | Path) -> tuple[ImageNet, dict[str, Any]]:
    """Network (eval mode) and meta from :func:`save_image_net`'s file.

    Raises:
        ValueError: The file's sha256 differs from ``<path>.sha256`` (when present).
    """
    path = Path(path)
    sidecar = path.with_name(path.name + ".sha256")
    if sidecar.exists():
        want = sidecar.read_text().split()[0]
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if want != got:
            raise ValueError(f"{path}: sha256 {got} differs from {sidecar} ({want}); rebuild "
                             "with `simjudge judges train --judge image-progress`")
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        state = {k: torch.from_numpy(np.array(data[k])) for k in data.files if k != "__meta__"}
    arch = meta["arch"]

    def make() -> ImageProgressNet:
        return ImageProgressNet(width=int(arch["width"]), size=tuple(arch["size"]),
                                text_dim=int(arch["text_dim"]))

    net: ImageNet = make()
    if "members" in arch:
        net = ImageProgressEnsemble([make() for _ in range(int(arch["members"]))])
    net.load_state_dict(state)
    net.eval()
    return net, meta
