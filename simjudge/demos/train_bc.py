"""``simjudge policies train-bc``: behaviour cloning from a demos folder, on CPU, one thread.

Reads the episodes of one task (:func:`~simjudge.demos.load.load_demos`), fits the network of
:mod:`simjudge.policies.bc` to their actions by mean squared error (Adam, minibatches drawn
with the seed), and writes the weights with their SHA-256 and a card of where they came
from: the command, the data (folder, episodes, frames, the demonstrating policy), the seed,
the training time. ``bc:PATH`` then loads the policy.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from simjudge.policies.bc import ROBOT_STATE_DIM, build_network, save_bc
from simjudge.tasks.spec.config import command_line, option

from .lerobot_format import DemoFormatError
from .load import load_demos

__all__ = ["TrainBCConfig", "train_bc"]


@dataclass(frozen=True, kw_only=True)
class TrainBCConfig:
    """Train a behaviour-cloning policy (torch MLP on state or CNN on frames) from demos.

    Attributes:
        demos: A folder of ``simjudge demos record`` (LeRobotDataset or npz).
        kind: ``mlp`` (the state vector) or ``cnn`` (the exterior frames + robot state).
        episodes: Train on the first N episodes of the task (0: all).
        task: The task to train on; default: the dataset's only task.
        out: The weights file to write (``.npz``; ``.sha256`` beside it).
        steps: Gradient steps.
        batch_size: Frames per minibatch.
        lr: Adam's learning rate.
        hidden: Width of the hidden layers.
        seed: Seed of the initial weights and the minibatches.
    """

    demos: str = option()
    kind: Literal["mlp", "cnn"] = "mlp"
    episodes: int = 0
    task: str | None = None
    out: str = option()
    steps: int = 2000
    batch_size: int = 256
    lr: float = 1e-3
    hidden: int = 256
    seed: int = 0


def _command(config: TrainBCConfig) -> str:
    """The command line that trains ``config`` (options at their defaults left out)."""
    return command_line(["simjudge", "policies", "train-bc"], config,
                        always=("demos", "kind", "episodes", "task", "out"))


def train_bc(config: TrainBCConfig) -> dict[str, Any]:
    """Train the policy of ``config`` and write it; returns its card (with ``weights``, ``sha256``).

    Raises:
        DemoFormatError: No demos, several tasks without ``--task``, or a CNN without frames.
    """
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    episodes = load_demos(config.demos, task=config.task, images=config.kind == "cnn")
    tasks = sorted({ep.task for ep in episodes})
    if len(tasks) != 1:
        raise DemoFormatError(f"{config.demos} holds episodes of {tasks}; choose one with --task")
    if config.episodes > 0:
        if len(episodes) < config.episodes:
            raise DemoFormatError(f"{config.demos} has {len(episodes)} episodes of {tasks[0]}, fewer than "
                                  f"--episodes {config.episodes}: record more")
        episodes = episodes[: config.episodes]
    state = np.concatenate([np.concatenate([ep.state, ep.environment_state], axis=1) for ep in episodes])
    actions = torch.from_numpy(np.concatenate([ep.actions for ep in episodes]).astype(np.float32))
    if config.kind == "cnn":
        if any(ep.images is None for ep in episodes):
            raise DemoFormatError(f"{config.demos} has no camera frames; record with --image-size 64 for a CNN")
        state = state[:, :ROBOT_STATE_DIM]
        images = torch.from_numpy(np.concatenate([ep.images for ep in episodes if ep.images is not None]))
    mean, std = state.mean(axis=0), state.std(axis=0) + 1e-3
    x = torch.from_numpy(((state - mean) / std).astype(np.float32))
    image_size = int(episodes[0].images.shape[1]) if config.kind == "cnn" and episodes[0].images is not None else 0
    meta: dict[str, Any] = {"kind": config.kind, "task": tasks[0], "state_dim": int(state.shape[1]),
                            "hidden": config.hidden, "image_size": image_size,
                            "state_mean": mean.tolist(), "state_std": std.tolist()}
    network = build_network(meta)
    optim = torch.optim.Adam(network.parameters(), lr=config.lr)
    gen = torch.Generator().manual_seed(config.seed)
    start = time.perf_counter()
    loss = torch.zeros(())
    for _ in range(config.steps):
        idx = torch.randint(0, x.shape[0], (min(config.batch_size, x.shape[0]),), generator=gen)
        if config.kind == "cnn":
            pred = network(images[idx].permute(0, 3, 1, 2).float() / 255.0, x[idx])
        else:
            pred = network(x[idx])
        loss = torch.mean((pred - actions[idx]) ** 2)
        optim.zero_grad()
        loss.backward()
        optim.step()
    seconds = time.perf_counter() - start
    demo_policies = sorted({ep.policy for ep in episodes})
    meta["provenance"] = {
        "command": _command(config), "demos": Path(config.demos).name, "demo_policy": demo_policies,
        "episodes": len(episodes), "frames": int(x.shape[0]),
        "demo_success_rate": sum(ep.success for ep in episodes) / len(episodes),
        "seed": config.seed, "steps": config.steps, "final_loss": float(loss.item()),
        "seconds": round(seconds, 1), "torch": torch.__version__, "python": platform.python_version(),
        "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    sha = save_bc(config.out, network, meta)
    parameters = sum(int(p.numel()) for p in network.parameters())
    return {**meta["provenance"], "weights": config.out, "sha256": sha, "parameters": parameters,
            "task": tasks[0], "kind": config.kind}
