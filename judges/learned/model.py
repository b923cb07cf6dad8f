"""The observation progress network: a token-attention MLP conditioned on the task text.

Each token (a movable joint or a free object, :mod:`.features`) gets a relevance logit and
a progress value from an MLP over its numbers, the robot's numbers, and the elementwise
product of the projected task-text and token-text embeddings (so the task text picks the
part). Φ̂ = Σ softmax(logits) · sigmoid(values) ∈ [0, 1].
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .features import GLOBAL_FEATURES, TOKEN_FEATURES

__all__ = ["EMBED_DIM", "ObsProgressNet", "file_sha256", "load_net", "save_net"]

EMBED_DIM = 384
"""MiniLM sentence-embedding size."""


class ObsProgressNet(nn.Module):
    """Φ̂ from tokens, robot numbers and text embeddings (see the module docstring).

    Args:
        hidden: Width of the MLP.
        text_dim: Width of the projected text embeddings.
    """

    def __init__(self, hidden: int = 96, text_dim: int = 32) -> None:
        super().__init__()
        self.hidden, self.text_dim = hidden, text_dim
        self.task_proj = nn.Linear(EMBED_DIM, text_dim)
        self.token_proj = nn.Linear(EMBED_DIM, text_dim)
        width = 3 * text_dim + len(TOKEN_FEATURES) + len(GLOBAL_FEATURES)
        self.mlp = nn.Sequential(
            nn.Linear(width, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 2),
        )

    def forward(self, task: torch.Tensor, token_emb: torch.Tensor, tokens: torch.Tensor,
                globals_: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Φ̂ of a batch.

        Args:
            task: ``(B, 384)`` task-text embeddings.
            token_emb: ``(B, T, 384)`` token-text embeddings.
            tokens: ``(B, T, F)`` token numbers.
            globals_: ``(B, G)`` robot numbers.
            mask: ``(B, T)`` bool, True for real tokens.

        Returns:
            ``(B,)`` Φ̂ in [0, 1].
        """
        return self.core(self.task_proj(task), self.token_proj(token_emb), tokens, globals_,
                         mask)

    def core(self, t: torch.Tensor, k: torch.Tensor, tokens: torch.Tensor,
             globals_: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Φ̂ from already projected task ``(B, D)`` and token ``(B, T, D)`` embeddings."""
        t = t[:, None, :].expand(-1, tokens.shape[1], -1)
        g = globals_[:, None, :].expand(-1, tokens.shape[1], -1)
        out = self.mlp(torch.cat([t * k, t, k, tokens, g], dim=-1))
        logits = out[..., 0].masked_fill(~mask, -1e9)
        weights = torch.softmax(logits, dim=-1)
        return (weights * torch.sigmoid(out[..., 1])).sum(-1)


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def save_net(net: ObsProgressNet, path: str | Path, meta: dict[str, Any]) -> str:
    """Write weights (NPZ of float32 arrays + JSON meta) and ``<path>.sha256``; return the hash."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    meta = {**meta, "hidden": net.hidden, "text_dim": net.text_dim}
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, __meta__=np.array(json.dumps(meta, sort_keys=True)), **arrays)
    tmp.replace(path)
    digest = file_sha256(path)
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return digest


def load_net(path: str | Path, *, check_sha256: bool = True) -> tuple[ObsProgressNet, dict]:
    """Load weights written by :func:`save_net` (checked against ``<path>.sha256``).

    Raises:
        ValueError: The file does not match its sha256 file.
    """
    path = Path(path)
    if check_sha256:
        want = path.with_name(path.name + ".sha256").read_text().split()[0]
        got = file_sha256(path)
        if want != got:
            raise ValueError(f"weights {path} have sha256 {got}, but {path.name}.sha256 says "
                             f"{want}; rebuild them with `simjudge judges train --judge "
                             "obs-progress`")
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        state = {k: torch.from_numpy(data[k]) for k in data.files if k != "__meta__"}
    net = ObsProgressNet(hidden=int(meta["hidden"]), text_dim=int(meta["text_dim"]))
    net.load_state_dict(state)
    net.eval()
    return net, meta
