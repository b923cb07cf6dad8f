"""LeRobot policies (``lerobot:PATH``): a checkpoint trained by LeRobot's own trainer.

``PATH`` is a LeRobot ``pretrained_model`` folder (``config.json``, ``model.safetensors`` and
the policy's pre/post-processor files, as ``lerobot-train`` writes them under
``checkpoints/*/pretrained_model``). Observations are given as a simjudge dataset records them
(:mod:`simjudge.demos.lerobot_format`): ``observation.state`` = the robot's 15 state numbers,
``observation.environment_state`` = the rest of the flat state (zero-padded to the width the
policy was trained on), ``observation.images.exterior`` = the exterior frame, ``task`` = the
prompt. The policy's actions are SimEnv's 7-D ``delta-translation`` actions (what the dataset
recorded); its action chunks are executed by LeRobot's own queue (``select_action``).

Where ``lerobot`` imports (the ``.venv-lerobot`` of ``make lerobot``), the policy runs in this
process (:class:`LeRobotPolicy`). Elsewhere (simjudge's main environment: LeRobot pins an
older torch), :func:`make_lerobot_policy` starts a worker in the LeRobot environment,
``python -m simjudge serve lerobot:PATH --port P`` on a free loopback port, and talks to it over the
openpi protocol (:class:`~simjudge.policies.remote.RemotePolicy`). The worker is kept for
the process's lifetime, so an audit's episodes share it; it is stopped at exit (on Linux also
when the process is killed).
"""

from __future__ import annotations

import atexit
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .base import Observation, Policy, PolicyError, PolicyInfo, PolicyTask

__all__ = ["LEROBOT_PYTHON_ENV", "LeRobotPolicy", "lerobot_python", "make_lerobot_policy"]

LEROBOT_PYTHON_ENV = "SIMJUDGE_LEROBOT_PYTHON"
"""Environment variable naming the Python of the LeRobot environment (default: the
checkout's ``.venv-lerobot/bin/python``)."""
ROBOT_STATE_DIM = 15
_WORKERS: dict[str, tuple[subprocess.Popen[str], str]] = {}
_LOCK = threading.Lock()


def _lerobot_importable() -> bool:
    try:
        import lerobot.policies  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


def lerobot_python() -> Path:
    """The Python that has ``lerobot`` (``$SIMJUDGE_LEROBOT_PYTHON`` or ``.venv-lerobot``).

    Raises:
        PolicyError: Neither exists (the message says to run ``make lerobot``).
    """
    given = os.environ.get(LEROBOT_PYTHON_ENV)
    path = Path(given) if given else Path(__file__).resolve().parents[2] / ".venv-lerobot" / "bin" / "python"
    if not path.is_file():
        raise PolicyError(f"lerobot: policies need the LeRobot environment, and {path} does not exist; "
                          f"create it with `make lerobot` (or set {LEROBOT_PYTHON_ENV} to a Python with lerobot)")
    return path


class LeRobotPolicy:
    """A LeRobot checkpoint run in this process (needs ``lerobot`` importable).

    Args:
        path: The ``pretrained_model`` folder.
        name: The policy's name.
    """

    def __init__(self, path: str | Path, name: str = "lerobot") -> None:
        import torch
        from lerobot.configs.policies import PreTrainedConfig  # type: ignore[import-not-found]
        from lerobot.policies.factory import (  # type: ignore[import-not-found]
            get_policy_class,
            make_pre_post_processors,
        )

        torch.set_num_threads(1)
        self.path = Path(path)
        if not (self.path / "config.json").is_file():
            raise PolicyError(f"{self.path} is not a LeRobot checkpoint (no config.json); give the "
                              "pretrained_model folder lerobot-train wrote (checkpoints/last/pretrained_model)")
        config = PreTrainedConfig.from_pretrained(str(self.path))
        config.device = "cpu"
        self.policy = get_policy_class(config.type).from_pretrained(str(self.path), config=config)
        self.policy.eval()
        self.pre, self.post = make_pre_post_processors(
            config, pretrained_path=str(self.path),
            preprocessor_overrides={"device_processor": {"device": "cpu"}})
        inputs = dict(config.input_features)
        env = inputs.get("observation.environment_state")
        self.env_dim = int(env.shape[0]) if env is not None else 0
        self.image_keys = [k for k in inputs if k.startswith("observation.images.")]
        size = tuple(int(n) for n in inputs[self.image_keys[0]].shape[1:]) if self.image_keys else (64, 64)
        self._info = PolicyInfo(
            name=name, spec=f"lerobot:{self.path}", action_space="delta-translation",
            observation_needs=("exterior_image",) if self.image_keys else (), image_size=(size[0], size[1]),
            metadata={"lerobot_type": config.type, "checkpoint": str(self.path)})

    @property
    def info(self) -> PolicyInfo:
        """Name, spec, action space and needs (the exterior camera if the policy has an image input)."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Clear the policy's action queue (and the processors' state)."""
        import torch

        torch.manual_seed(seed)
        self.policy.reset()
        for pipeline in (self.pre, self.post):
            reset = getattr(pipeline, "reset", None)
            if callable(reset):
                reset()

    def batch(self, obs: Observation) -> dict[str, Any]:
        """The LeRobot batch of one observation (before the preprocessor)."""
        import torch

        state = np.asarray(obs["state"], np.float32).reshape(-1)
        batch: dict[str, Any] = {"observation.state": torch.from_numpy(state[:ROBOT_STATE_DIM].copy())[None],
                                 "task": [str(obs.get("prompt", ""))]}
        if self.env_dim:
            rest = state[ROBOT_STATE_DIM:]
            if rest.shape[0] > self.env_dim:
                raise PolicyError(f"{self.path} was trained on an environment state of {self.env_dim} numbers; "
                                  f"this env has {rest.shape[0]}: audit it on the task it was trained for")
            env = np.zeros(self.env_dim, np.float32)
            env[: rest.shape[0]] = rest
            batch["observation.environment_state"] = torch.from_numpy(env)[None]
        for key in self.image_keys:
            image = np.asarray(obs["exterior_image"], np.float32).transpose(2, 0, 1) / 255.0
            batch[key] = torch.from_numpy(np.ascontiguousarray(image))[None]
        return batch

    def act(self, obs: Observation) -> np.ndarray:
        """The policy's next action ``(7,)`` (LeRobot pops it from its chunk queue)."""
        import torch

        with torch.no_grad():
            action = self.post(self.policy.select_action(self.pre(self.batch(obs))))
        return np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[:7], -1.0, 1.0)

    def close(self) -> None:
        """Nothing to release."""


class _WorkerPolicy:
    """A :class:`RemotePolicy` on a LeRobot worker process (kept alive for reuse)."""

    def __init__(self, path: str, url: str) -> None:
        from .remote import RemotePolicy

        self._remote = RemotePolicy(url)
        self._info = replace(self._remote.info, name="lerobot", spec=f"lerobot:{path}")

    @property
    def info(self) -> PolicyInfo:
        """The worker's policy info, with this spec."""
        return self._info

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Reset the worker's policy."""
        self._remote.reset(task, seed)

    def act(self, obs: Observation) -> np.ndarray:
        """The worker's next action."""
        return self._remote.act(obs)

    def close(self) -> None:
        """Close the connection (the worker stays up for the next episode; it stops at exit)."""
        self._remote.close()


def _start_worker(path: str, timeout: float = 180.0) -> str:
    """Start ``simjudge serve lerobot:PATH`` in the LeRobot environment; return its URL."""
    python = lerobot_python()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([str(python), "-m", "simjudge", "serve", f"lerobot:{path}", "--port", str(_free_port())],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    deadline, seen = time.monotonic() + timeout, []
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip())
        found = re.search(r"serving .* on (ws://\S+)", line)
        if found:
            threading.Thread(target=_drain, args=(proc,), daemon=True).start()
            _WORKERS[path] = (proc, found.group(1))
            return found.group(1)
    proc.kill()
    raise PolicyError(f"the LeRobot worker for {path} did not start within {timeout:.0f} s; its output:\n"
                      + "\n".join(seen[-15:]))


def _die_with_parent() -> None:
    """In the worker (Linux): SIGTERM when the process that started it dies, even by SIGKILL.

    (Strictly, when the thread that started it ends: a worker started from a short-lived thread
    is started again by the next :func:`make_lerobot_policy`.)
    """
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def _free_port() -> int:
    """A loopback port free now (the worker binds it a moment later)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _drain(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    for _ in proc.stdout:
        pass


@atexit.register
def _stop_workers() -> None:
    for proc, _ in list(_WORKERS.values()):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    _WORKERS.clear()


def make_lerobot_policy(path: str) -> Policy:
    """The policy of a LeRobot checkpoint: in process if ``lerobot`` imports, else through a worker.

    Raises:
        PolicyError: Not a checkpoint folder, or no LeRobot environment (``make lerobot``).
    """
    folder = Path(path).resolve()
    if not (folder / "config.json").is_file():
        raise PolicyError(f"lerobot:{path}: {folder} holds no config.json; give the pretrained_model folder "
                          "of a lerobot-train checkpoint (outputs/.../checkpoints/last/pretrained_model)")
    if _lerobot_importable():
        return LeRobotPolicy(path)
    key = str(folder)
    with _LOCK:
        worker = _WORKERS.get(key)
        url = worker[1] if worker is not None and worker[0].poll() is None else _start_worker(key)
    return _WorkerPolicy(path, url)
