"""Behaviour-cloning policies (``bc:PATH``): a small torch MLP on state or CNN on 64² frames.

A BC weights file is one ``.npz``: the network's parameters (a torch state dict as arrays)
and ``meta``, a JSON card (kind, task, input sizes, normalisation, training provenance).
Beside it, ``PATH.sha256`` holds the file's SHA-256; a file that does not match it is
refused. Train one with ``simjudge policies train-bc`` (:mod:`simjudge.demos.train_bc`).

* ``mlp``: input the env's flat state vector (normalised by the training data's mean and
  std), two hidden layers, output the 7-D ``delta-translation`` action through ``tanh``.
* ``cnn``: input the exterior camera frame (``image_size``², as ``simjudge demos record``
  renders it) and the robot's 15 state numbers; three strided convolutions, then an MLP.

Both run on CPU with one torch thread and act deterministically.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from .base import Observation, PolicyError, PolicyInfo, PolicyTask

__all__ = ["BCPolicy", "BC_KINDS", "build_network", "file_sha256", "load_bc", "save_bc"]

BC_KINDS = ("mlp", "cnn")
"""The network kinds of :func:`build_network`."""
ROBOT_STATE_DIM = 15
"""The robot's part of the state vector (the CNN's second input)."""


def build_network(meta: dict[str, Any]) -> Any:
    """The torch module of a BC card (``meta["kind"]``, sizes); untrained.

    Raises:
        PolicyError: Unknown kind.
    """
    import torch
    from torch import nn

    hidden = int(meta.get("hidden", 256))
    if meta["kind"] == "mlp":
        return nn.Sequential(nn.Linear(int(meta["state_dim"]), hidden), nn.ReLU(),
                             nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 7), nn.Tanh())
    if meta["kind"] != "cnn":
        raise PolicyError(f"unknown BC kind {meta['kind']!r}; use one of {list(BC_KINDS)}")

    class _CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(3, 16, 5, stride=2, padding=2), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(4), nn.Flatten())
            self.head = nn.Sequential(nn.Linear(32 * 16 + ROBOT_STATE_DIM, hidden), nn.ReLU(),
                                      nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 7), nn.Tanh())

        def forward(self, image: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
            return self.head(torch.cat([self.conv(image), state], dim=1))

    return _CNN()


def file_sha256(path: str | Path) -> str:
    """SHA-256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def save_bc(path: str | Path, network: Any, meta: dict[str, Any]) -> str:
    """Write ``network``'s parameters and ``meta`` to ``path`` (``.npz``) and ``path.sha256``.

    Returns:
        The file's SHA-256.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"param/{k}": v.detach().cpu().numpy() for k, v in network.state_dict().items()}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
    tmp.replace(path)
    sha = file_sha256(path)
    Path(f"{path}.sha256").write_text(f"{sha}  {path.name}\n")
    return sha


def load_bc(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The torch module (eval mode) and card of a BC weights file, its SHA-256 checked.

    Raises:
        PolicyError: Missing file, a SHA-256 mismatch, or not a BC weights file.
    """
    import torch

    path = Path(path)
    if not path.is_file():
        raise PolicyError(f"BC weights {path} do not exist; train them with `simjudge policies train-bc "
                          f"--demos DIR --out {path}` or use a zoo policy (`simjudge policies list`)")
    side = Path(f"{path}.sha256")
    sha = file_sha256(path)
    if side.is_file() and side.read_text().split()[0] != sha:
        raise PolicyError(f"{path}: SHA-256 {sha[:16]}... does not match {side}; the weights changed "
                          "since training: retrain them or restore the file")
    try:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            state = {k.removeprefix("param/"): torch.from_numpy(np.array(data[k]))
                     for k in data.files if k.startswith("param/")}
    except (KeyError, ValueError, OSError) as exc:
        raise PolicyError(f"{path} is not a BC weights file ({exc}); write one with train-bc") from exc
    network = build_network(meta)
    network.load_state_dict(state)
    network.eval()
    meta["sha256"] = sha
    return network, meta


class BCPolicy:
    """A trained BC network acting on the env's state (``mlp``) or frames (``cnn``).

    Args:
        path: The weights file (``.npz``) written by ``simjudge policies train-bc``.
        name: The policy's name (default ``bc``).
    """

    def __init__(self, path: str | Path, name: str = "bc") -> None:
        import torch

        torch.set_num_threads(1)
        self.path = Path(path)
        self.network, self.meta = load_bc(self.path)
        kind = self.meta["kind"]
        size = int(self.meta.get("image_size") or 64)  # an MLP has none: any size a server may state
        self._info = PolicyInfo(
            name=name, spec=f"bc:{self.path}", action_space="delta-translation",
            observation_needs=("exterior_image",) if kind == "cnn" else (),
            image_size=(size, size),
            metadata={"kind": kind, "task": self.meta.get("task"), "sha256": self.meta["sha256"],
                      "weights": str(self.path)})
        self._mean = np.asarray(self.meta["state_mean"], np.float32)
        self._std = np.asarray(self.meta["state_std"], np.float32)

    @property
    def info(self) -> PolicyInfo:
        """Name, spec, action space and needs (the CNN observes the exterior camera)."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Nothing to reset (the network is deterministic and memoryless)."""

    def act(self, obs: Observation) -> np.ndarray:
        """The network's action for ``obs`` (``(7,)``, in [-1, 1]).

        Raises:
            PolicyError: The state vector is not the one the network was trained on.
        """
        import torch

        state = np.asarray(obs["state"], np.float32).reshape(-1)
        width = self._mean.shape[0]
        if self.meta["kind"] == "cnn":
            state = state[:ROBOT_STATE_DIM]
        if state.shape[0] != width:
            raise PolicyError(f"{self.path} was trained on {self.meta.get('task')} (state of {width} numbers); "
                              f"this env's state has {state.shape[0]}: audit it on its own task")
        x = torch.from_numpy(((state - self._mean) / self._std)[None, :])
        with torch.no_grad():
            if self.meta["kind"] == "cnn":
                image = np.asarray(obs["exterior_image"], np.float32).transpose(2, 0, 1)[None] / 255.0
                out = self.network(torch.from_numpy(np.ascontiguousarray(image)), x)
            else:
                out = self.network(x)
        return out.numpy()[0].astype(np.float64)

    def close(self) -> None:
        """Nothing to release."""
